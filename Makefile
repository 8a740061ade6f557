# agent-coord — the two commands that matter: `make run` and `make test`.
# On a fresh machine with only rustup and cargo, both install what they need.

CARGO ?= cargo
BIN := target/release/agent-coord

.PHONY: run demo-coordinator test bench soak soak-coordinators tools test-tools host-tools web browser-tools vendor-tools lint fmt clean man fuzz fuzz-tools

# The build tool compiles once per machine: a light optimisation level (no LTO, parallel
# codegen) builds them in about half the time, and they run as fast as this build needs.
TOOL_PROFILE := CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0
# wasm-bindgen-cli must equal the wasm-bindgen crate the lock file pins.
WASM_BINDGEN_VERSION = $(shell awk '/^name = "wasm-bindgen"$$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

## Install the toolchain pieces the build needs (idempotent, quick when present).
tools:
	@command -v git >/dev/null || (echo "git is required" >&2; exit 1)
	@if command -v rustup >/dev/null; then \
		rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown; \
		rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy; \
		rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt; \
	fi
	@wasm-bindgen --version 2>/dev/null | grep -q '$(WASM_BINDGEN_VERSION)' || $(TOOL_PROFILE) $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION)

## What `make test` installs, side by side: the compiled tools (the CPU) while apt and npm
## download (the network); the two apt users one after the other.
test-tools:
	@$(MAKE) --no-print-directory -j2 tools host-tools

host-tools:
	@$(MAKE) --no-print-directory browser-tools
	@$(MAKE) --no-print-directory vendor-tools

## Debian's Chromium and ChromeDriver, and playwright-core (which drives the system
## Chromium; it never downloads a browser).
browser-tools:
	@command -v chromium >/dev/null || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver)
	@test -d tests/browser/node_modules/playwright-core || (cd tests/browser && npm ci --no-audit --no-fund)

## The real vendor model CLIs the lane adapters' contract tests run (tests/vendors/package.json
## pins Claude Code, Codex and Gemini CLI; tests/tests/test_vendors_real.rs runs them offline,
## inside `unshare -n` under strace, against a fake model API). Their postinstall places native
## binaries. Also strace, ip and unshare, which those tests use.
vendor-tools:
	@command -v strace >/dev/null && command -v ip >/dev/null && command -v unshare >/dev/null || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq strace iproute2 util-linux)
	@test -x tests/vendors/node_modules/.bin/claude -a -x tests/vendors/node_modules/.bin/codex -a -x tests/vendors/node_modules/.bin/gemini || (cd tests/vendors && npm ci --no-audit --no-fund)

## The dashboard front end (web/ → web/dist), embedded into the binary by cli/build.rs: the
## web crate for wasm32 (size-optimised profile), wasm-bindgen's JavaScript glue, then
## xtask's bundle (content-hashed names, the page that loads them; xtask/src/bundle.rs).
## WEB_LINT=1 (`make test`) compiles the workspace's crates with clippy-driver and warnings
## denied: the wasm32 lint pass of `shared` and `web` rides on this build instead of checking
## leptos and the rest for wasm32 a second time. The bundle is the same (within 0.1 % of the
## size; clippy-driver only turns MIR optimisation off, LLVM's run as ever).
WASM_OUT = $${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/wasm-release
WEB_LINT_ENV = $(if $(WEB_LINT),RUSTC_WORKSPACE_WRAPPER="$$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)" RUSTFLAGS=-Dwarnings)
web: tools
	$(WEB_LINT_ENV) $(CARGO) build -p agent-coord-web --bin agent-coord-web --target wasm32-unknown-unknown --profile wasm-release
	wasm-bindgen --target web --no-typescript --out-dir $(WASM_OUT)/bindgen $(WASM_OUT)/agent-coord-web.wasm
	$(CARGO) run -q -p xtask -- web-bundle web $(WASM_OUT)/bindgen web/dist

## Build the front end and the release binary, then serve a live demo: a temporary
## coordination repository kept moving by a simulated fleet, at http://127.0.0.1:4319.
run: web
	$(CARGO) build --release -p agent-coord
	$(BIN) serve --demo

## Build the front end, agent-coord and the demo driver, then run the issue coordinator
## against a fake GitHub, its lanes the built-in adapters (`agent-coord lane VENDOR`) driving
## fake vendor CLIs: three assigned issues go through checks, PR gates, CI, readiness and
## approval to Ready pull requests a scripted human merges, while the dashboard at
## http://127.0.0.1:4320 shows them move; at the end it prints each task's lane runs and spend
## (DEMO_ARGS="--port 0 --delay 2", "--exit-when-done"). Needs git and ssh-keygen.
demo-coordinator: web
	$(CARGO) build --release -p agent-coord
	$(CARGO) build --release -p agent-coord-tests --bin coordinator-demo --bin fake-vendor
	target/release/coordinator-demo $(DEMO_ARGS)

## Every test: unit tests, end-to-end tests against real git repositories, the dashboard
## server over real sockets and in headless Chromium, the lane adapters against the real vendor
## CLIs (offline, in a loopback-only namespace), the wasm32 builds, formatting, lints.
## Every target compiles: `cargo test` builds the libraries, the tests and the binary the
## end-to-end tests run (target/debug/agent-coord, through cli/tests/binary.rs, with the
## dependencies compiled once for the whole workspace), clippy --all-targets checks the rest
## (benches, examples), and the front end's wasm32 build runs under clippy with warnings
## denied (WEB_LINT=1), which lints both crates the browser runs.
test: test-tools
	$(MAKE) --no-print-directory web WEB_LINT=1
	$(CARGO) test --workspace
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## Whole-process benchmarks on generated fleets; prints figures.
bench: tools web
	$(CARGO) build --release -p agent-coord -p agent-coord-tests
	target/release/bench --scales 1,10 --runs 30
	target/release/bench dashboard 10,100
	target/release/bench first-request 1 10
	target/release/bench update 10,100
	target/release/bench enrich 1
	target/release/bench coordinator --ticks 10
	target/release/bench coordinators --issues 200 --machines 3 --slots 4 --lane-ms 2000 --in-flight 100
	target/release/bench lanes 30
	target/release/bench lane-runs 200
	target/release/bench lane-timeline 1000 50
	target/release/bench serve-memory 700
	target/release/bench serve-load --clients 200 --streams 500 --seconds 20
	@echo "front-end bundle, gzip -9: wasm $$(gzip -9 -c web/dist/*.wasm | wc -c) bytes, js $$(gzip -9 -c web/dist/*.js | wc -c) bytes"

## Nightly and cargo-fuzz, for `make fuzz` only (the rest of the build stays on stable).
fuzz-tools:
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked

FUZZ_SECONDS ?= 60
## Coverage-guided fuzzing (cargo-fuzz, nightly): runs each target in fuzz/fuzz_targets for
## FUZZ_SECONDS, prints executions per target; a crash is saved to fuzz/regressions/<target>/,
## which `make test` replays on stable (FUZZ_TARGETS="a b" runs only those).
fuzz: fuzz-tools
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh $(FUZZ_TARGETS)

## A fleet of ten under load for a few minutes: ten clones of one bare remote each run
## SOAK_OPS commands at once (claims racing for shared targets with --sync, releases,
## heartbeats, events, syncs); prints throughput, convergence rounds and the exit-2 rate, and
## fails if an acknowledged event is lost, two agents hold one target, a loser is not told,
## or the tips do not converge within two sync rounds (SOAK_OPS=60, SOAK_SEED=1).
SOAK_OPS ?= 60
SOAK_SEED ?= 1
soak:
	$(CARGO) build --release -p agent-coord
	$(CARGO) build --release -p agent-coord-tests --bin soak
	$${CARGO_TARGET_DIR:-target}/release/soak --machines 10 --ops $(SOAK_OPS) --seed $(SOAK_SEED)

## Coordinators under load: three machines of one worker through one coordination remote,
## the fake GitHub and instant lanes; 60 issues assigned over time, one machine SIGKILLed
## mid-tick and restarted, one killed for good (its tasks taken over once its heartbeat is
## dead). Fails if an issue got two tasks, accept comments, pull requests, approvals or Ready
## mutations, a model ran twice, a task that needed no human is not Ready, or a live machine
## ran under 25 % of the lanes. A short run is in `make test` (test_coordinator_soak).
SOAK_ISSUES ?= 60
soak-coordinators:
	$(CARGO) build --release -p agent-coord --bins
	$(CARGO) build --release -p agent-coord-tests --bin soak-coordinators
	$${CARGO_TARGET_DIR:-target}/release/soak-coordinators --issues $(SOAK_ISSUES) --seed $(SOAK_SEED)

## The man page, generated from the same clap definitions as --help: target/man/agent-coord.1
## (read it with `man target/man/agent-coord.1`).
man:
	mkdir -p target/man
	$(CARGO) run -q -p agent-coord -- man > target/man/agent-coord.1

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
