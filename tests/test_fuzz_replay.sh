#!/bin/bash
# The fuzz harness (whole daemon fed one peer's bytes) on its seed corpus,
# built with AddressSanitizer and UndefinedBehaviorSanitizer.
source "$(dirname "$0")/lib.sh"
out=$("$TOP/tests/bin/fuzz_replay" "$TOP"/fuzz/corpus/* 2>&1)
rc=$?
echo "$out" | tail -n 5 | sed 's/^/# /'
n=$(ls "$TOP"/fuzz/corpus | wc -l)
check "fuzz harness replays $n seeds cleanly under sanitizers" \
	test "$rc" -eq 0 -a "$n" -ge 8
finish
