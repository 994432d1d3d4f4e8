#!/bin/bash
# The fuzz harnesses on their seed corpora, built with AddressSanitizer and
# UndefinedBehaviorSanitizer: fuzz_conn (whole daemon fed one peer's
# bytes) on fuzz/corpus, fuzz_api (the library's API driven by scripts)
# on fuzz/corpus-api, one seed at a time so that a failure names it.
source "$(dirname "$0")/lib.sh"
out=$("$TOP/tests/bin/fuzz_replay" "$TOP"/fuzz/corpus/* 2>&1)
rc=$?
echo "$out" | tail -n 5 | sed 's/^/# /'
n=$(ls "$TOP"/fuzz/corpus | wc -l)
check "fuzz harness replays $n seeds cleanly under sanitizers" \
	test "$rc" -eq 0 -a "$n" -ge 8

# replay_api SCRIPT: the API harness on one script, its report in api.log
# (and bash's "Aborted" line where the caller sends stderr).
replay_api() {
	"$TOP/tests/bin/fuzz_api_replay" "$1" >"$T/api.log" 2>&1
}

n=0
bad=()
for f in "$TOP"/fuzz/corpus-api/*; do
	n=$((n + 1))
	if ! replay_api "$f" 2>>"$T/api.log"; then
		bad+=("$(basename "$f")")
		grep -E 'violation|ERROR|SUMMARY|runtime error' "$T/api.log" |
			head -n 3 | sed "s/^/# $(basename "$f"): /"
	fi
done
check "API fuzz harness replays $n scripts cleanly under sanitizers${bad:+ (failed: ${bad[*]})}" \
	test "${#bad[@]}" -eq 0 -a "$n" -ge 30
finish
