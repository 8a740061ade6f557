#!/usr/bin/env bash
# Runs every fuzz target (or those named as arguments) for FUZZ_SECONDS each, on nightly
# with cargo-fuzz, and prints one line per target: executions, and the crash it found.
# A crash is copied to fuzz/regressions/<target>/ so that `make test` replays it on stable
# once it is fixed; the run exits 1 when any target crashed.
set -u
cd "$(dirname "$0")"
seconds="${FUZZ_SECONDS:-60}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
mkdir -p logs
failed=0
summary=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    log="logs/$t.log"
    dict=(); [ -f "dicts/$t.dict" ] && dict=(-dict="dicts/$t.dict")
    cargo +nightly fuzz run "$t" "corpus/$t" $( [ -d "seeds/$t" ] && echo "seeds/$t" ) -- "${dict[@]}" -max_total_time="$seconds" \
        -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 >"$log" 2>&1
    rc=$?
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
    crash=$(grep -Eo "artifacts/$t/[a-z-]+-[0-9a-f]+" "$log" | tail -1)
    if [ $rc -ne 0 ] || [ -n "$crash" ]; then
        failed=1
        if [ -n "$crash" ]; then
            mkdir -p "regressions/$t"
            cp "$crash" "regressions/$t/"
        fi
        summary+=("$t: ${runs:-?} executions in ${seconds} s, FAILED (exit $rc) ${crash:+-> regressions/$t/$(basename "$crash")}; see fuzz/$log")
    else
        summary+=("$t: ${runs:-?} executions in ${seconds} s, no crash")
    fi
done
printf '%s\n' "${summary[@]}" | tee logs/summary.txt
exit $failed
