# agent-coord — the two commands that matter: `make run` and `make test`.
# On a fresh machine with only rustup and cargo, both install what they need.

CARGO ?= cargo
BIN := target/release/agent-coord

.PHONY: run test bench tools lint fmt clean

## Install the toolchain pieces the build needs (idempotent, quick when present).
tools:
	@command -v git >/dev/null || (echo "git is required" >&2; exit 1)
	@if command -v rustup >/dev/null; then \
		rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown; \
		rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy; \
		rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt; \
	fi

## Build the release binary and run the main job on the zero-config default repository:
## the demo walkthrough, then the status of this machine's coordination state.
run: tools
	$(CARGO) build --release -p agent-coord
	$(BIN) demo
	$(BIN) status

## Every test: unit tests, end-to-end tests against real git repositories, the wasm32
## build of the shared crate, formatting and lints.
test: tools
	$(CARGO) build --workspace --all-targets
	$(CARGO) test --workspace
	$(CARGO) build -p agent-coord-shared --target wasm32-unknown-unknown
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## Whole-process benchmarks on generated fleets (scale 1 and 10); prints figures.
bench: tools
	$(CARGO) build --release -p agent-coord -p agent-coord-tests
	target/release/bench --scales 1,10 --runs 30

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
