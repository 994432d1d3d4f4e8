#!/bin/bash
# The typed-data parsers under fuzzing: fuzz/fuzz_multipart (its
# invariant: a body fed whole and fed in pieces, paused, comes to the same
# parts and bytes), fuzz/fuzz_cookie (the reader's pairs well formed, the
# builder's output read back as given) and fuzz/fuzz_router (patterns and
# raw paths).  Each replays its seeds under gcc's sanitizers, then runs
# libFuzzer (clang) for FUZZ_TYPED_SECONDS (5 by default) from them.  A
# crash, leak or sanitizer report fails; an input libFuzzer finds is kept
# in fuzz/found/ (add it to fuzz/corpus-NAME as a regression).
source "$(dirname "$0")/lib.sh"
secs=${FUZZ_TYPED_SECONDS:-5}

for t in multipart cookie router; do
	if ! make -C "$TOP" -s "tests/bin/fuzz_replay_$t" >"$T/build.log" 2>&1; then
		not_ok "make tests/bin/fuzz_replay_$t: $(tail -n 5 "$T/build.log")"
		continue
	fi
	n=$(ls "$TOP/fuzz/corpus-$t" | wc -l)
	out=$("$TOP/tests/bin/fuzz_replay_$t" "$TOP"/fuzz/corpus-$t/* 2>&1)
	rc=$?
	echo "$out" | tail -n 3 | sed 's/^/# /'
	check "fuzz_$t replays its $n seeds cleanly under sanitizers" \
		test "$rc" -eq 0 -a "$n" -ge 5

	if ! fuzz_make "fuzz/fuzz_$t" >"$T/build.log" 2>&1; then
		not_ok "make fuzz/fuzz_$t (clang): $(tail -n 5 "$T/build.log")"
		continue
	fi
	mkdir -p "$T/$t" "$T/$t-run"
	cp "$TOP"/fuzz/corpus-$t/* "$T/$t/"
	(cd "$T/$t-run" && "$TOP/fuzz/fuzz_$t" -max_len=4096 -max_total_time="$secs" \
		-timeout=10 -print_final_stats=1 "$T/$t" >"$T/$t.log" 2>&1)
	rc=$?
	runs=$(awk '/number_of_executed_units/ { print $NF }' "$T/$t.log")
	echo "# fuzz_$t: ${runs:-0} executions in $secs s"
	if [ "$rc" -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|crash-|leak-|timeout-' "$T/$t.log" | head -n 20 | sed 's/^/# /'
		for f in "$T/$t-run"/crash-* "$T/$t-run"/leak-* "$T/$t-run"/timeout-*; do
			[ -e "$f" ] && { mkdir -p "$TOP/fuzz/found"; cp "$f" "$TOP/fuzz/found/$t-$(basename "$f")"; }
		done
	fi
	check "libFuzzer fuzz_$t for $secs s: no crash, leak or report (exit $rc)" \
		test "$rc" -eq 0
	check "fuzz_$t ran at least 1000 executions (${runs:-0})" test "${runs:-0}" -ge 1000
done
finish
