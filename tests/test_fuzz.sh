#!/bin/bash
# A short libFuzzer pass (clang, ASan+UBSan) over the codec and the whole
# connection input path: fuzz/fuzz_conn from the seed corpus for
# FUZZ_SECONDS (20 by default); then fuzz/fuzz_api, the library's API
# driven by scripts, from fuzz/corpus-api for FUZZ_API_SECONDS (10).  A
# crash, leak, sanitizer report or broken invariant fails; libFuzzer
# leaves the input in crash-* under the scratch dir (printed): add it to
# the corpus, where test_fuzz_replay keeps it as a regression.
source "$(dirname "$0")/lib.sh"
FUZZ=$TOP/fuzz/fuzz_conn
secs=${FUZZ_SECONDS:-20}

# Built here, not by make check's build: it needs clang (make deps
# installs it) and compiles the engine a third time.
if ! fuzz_make fuzz/fuzz_conn >"$T/build.log" 2>&1 || [ ! -x "$FUZZ" ]; then
	not_ok "make fuzz/fuzz_conn (clang): $(tail -n 5 "$T/build.log")"
	finish
fi
mkdir -p "$T/corpus"
cp "$TOP"/fuzz/corpus/* "$T/corpus/"
(cd "$T" && "$FUZZ" -max_len=4096 -max_total_time="$secs" -timeout=10 \
	-print_final_stats=1 "$T/corpus" >"$T/fuzz.log" 2>&1)
rc=$?
runs=$(awk '/number_of_executed_units/ { print $NF }' "$T/fuzz.log")
cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$T/fuzz.log" | tail -n 1)
echo "# libFuzzer: ${runs:-0} executions in $secs s from $(ls "$TOP"/fuzz/corpus | wc -l) seeds, $cov, corpus now $(ls "$T/corpus" | wc -l) inputs"
if [ "$rc" -ne 0 ]; then
	grep -E 'ERROR|SUMMARY|crash-|leak-|timeout-' "$T/fuzz.log" | head -n 20 | sed 's/^/# /'
	for f in "$T"/crash-* "$T"/leak-* "$T"/timeout-*; do
		[ -e "$f" ] && { mkdir -p "$TOP/fuzz/found"; cp "$f" "$TOP/fuzz/found/"; echo "# kept in fuzz/found/$(basename "$f")"; }
	done
fi
check "libFuzzer for $secs s: no crash, leak or sanitizer report (exit $rc)" test "$rc" -eq 0
check "libFuzzer ran at least 1000 executions (${runs:-0})" test "${runs:-0}" -ge 1000

# The API fuzzer: the engine alone, its invariants checked after each step.
API=$TOP/fuzz/fuzz_api
secs=${FUZZ_API_SECONDS:-10}
if ! fuzz_make fuzz/fuzz_api >"$T/build-api.log" 2>&1 || [ ! -x "$API" ]; then
	not_ok "make fuzz/fuzz_api (clang): $(tail -n 5 "$T/build-api.log")"
	finish
fi
mkdir -p "$T/corpus-api" "$T/api"
cp "$TOP"/fuzz/corpus-api/* "$T/corpus-api/"
(cd "$T/api" && "$API" -max_len=4096 -max_total_time="$secs" -timeout=10 \
	-dict="$TOP/fuzz/api.dict" -print_final_stats=1 "$T/corpus-api" \
	>"$T/fuzz-api.log" 2>&1)
rc=$?
runs=$(awk '/number_of_executed_units/ { print $NF }' "$T/fuzz-api.log")
cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$T/fuzz-api.log" | tail -n 1)
echo "# fuzz_api: ${runs:-0} executions in $secs s from $(ls "$TOP"/fuzz/corpus-api | wc -l) scripts, $cov"
if [ "$rc" -ne 0 ]; then
	grep -E 'violation|ERROR|SUMMARY|crash-|leak-|timeout-' "$T/fuzz-api.log" | head -n 20 | sed 's/^/# /'
	for f in "$T"/api/crash-* "$T"/api/leak-* "$T"/api/timeout-*; do
		[ -e "$f" ] && { mkdir -p "$TOP/fuzz/found-api"; cp "$f" "$TOP/fuzz/found-api/"; echo "# kept in fuzz/found-api/$(basename "$f")"; }
	done
fi
check "fuzz_api for $secs s: no crash, leak or broken invariant (exit $rc)" test "$rc" -eq 0
check "fuzz_api ran at least 500 executions (${runs:-0})" test "${runs:-0}" -ge 500
finish
