#!/bin/bash
# tests/cputime, which gives make check its processor line: a busy child's
# processor seconds are counted, so are a daemon's that forked away from
# its parent (it is reparented to cputime, a child subreaper, which waits
# for it), and the command's exit status comes back.
source "$(dirname "$0")/lib.sh"
CPUTIME=$TOP/tests/cputime

# busy.py SECONDS: spends SECONDS of processor time in user space.
cat >"$T/busy.py" <<'PY'
import sys, time
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    for i in range(20000):
        pass
PY

# cpu_s FILE: user and system seconds of a cputime report, added.
cpu_s() {
	local re='^user ([0-9.]+) s, system ([0-9.]+) s \([0-9.]+ processor-minutes\)$' line
	IFS= read -r line <"$1"
	[[ $line =~ $re ]] && awk -v u="${BASH_REMATCH[1]}" -v s="${BASH_REMATCH[2]}" 'BEGIN { print u + s }'
}

"$CPUTIME" -o "$T/direct" python3 "$T/busy.py" 0.5
rc=$?
u=$(cpu_s "$T/direct")
check "a child busy for 0.5 s: its status (0, $rc) and at least 0.45 s of processor time ($(cat "$T/direct"))" \
	awk -v u="$u" -v rc="$rc" 'BEGIN { exit !(rc == 0 && u >= 0.45 && u < 5) }'

# The parent exits at once; its grandchild, in a session of its own, is
# busy 0.5 s more and then writes a file.
start=$(now_ns)
"$CPUTIME" -o "$T/orphan" bash -c \
	"(setsid python3 '$T/busy.py' 0.5 && touch '$T/orphan.done') </dev/null >/dev/null 2>&1 & exit 0"
u=$(cpu_s "$T/orphan")
check "a daemon that forked away: waited for (it ended first)" test -e "$T/orphan.done"
check "a daemon that forked away: its 0.5 s counted ($(cat "$T/orphan"))" \
	awk -v u="$u" 'BEGIN { exit !(u >= 0.45 && u < 5) }'

"$CPUTIME" -o "$T/st" sh -c 'exit 3'
check "the command's exit status comes back (3)" test $? -eq 3
"$CPUTIME" -o "$T/sig" sh -c 'kill -TERM $$'
check "a command killed by signal 15 gives 143" test $? -eq 143
"$CPUTIME" -o "$T/none" "$T/no-such-program" 2>/dev/null
check "a command that cannot start gives 127" test $? -eq 127

# A process still running GRACE s after the command ended is named and
# left alone: a leak does not hang make check.
start=$(now_ns)
"$CPUTIME" -o "$T/left" -g 0.5 bash -c \
	"(setsid sleep 2.5 </dev/null >/dev/null 2>&1 &); exit 5" 2>"$T/left.err"
rc=$?
ms=$(ms_since "$start")
check "a process left running: not waited for past the grace (exit $rc, $ms ms)" \
	test "$rc" -eq 5 -a "$ms" -lt 2000
check "a process left running: named on stderr ($(cat "$T/left.err"))" \
	grep -q '^# cputime: still running .* sleep 2.5' "$T/left.err"
finish
