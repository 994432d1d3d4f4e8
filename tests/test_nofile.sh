#!/bin/bash
# The defaults scale past 1024 connections (issue 36).  The output budget
# admits --max-queued / --share-floor slow readers (16,384 on the
# defaults), and behind nginx with buffering off each request in flight
# holds a connection; --max-conns was 1024 and the soft RLIMIT_NOFILE 1024.
#   - evfcgid started under a soft limit of 1024 raises it to the hard one,
#     and its default --max-conns follows: the budget's 16,384, or what
#     the descriptors allow (less 64), logged once with the numbers; an
#     explicit --max-conns wins.
#   - On its defaults, 2000 idle kept connections (each answered once)
#     and 300 slow readers of an 8 MiB /stream at once, then /hello on a
#     2301st: all served.  On the old default the 1025th connection waited
#     in the accept queue.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
FCGI_LOAD=$TOP/tools/fcgi_load
NOREAD="python3 $TOP/tests/noread.py"
IDLE=2000
SLOW=300
hard=$(ulimit -Hn)

# soft_of PID: its soft descriptor limit.
soft_of() { awk '/^Max open files/ { print $4 }' "/proc/$1/limits"; }

# start_soft1024 LOGNAME HARD ARGS...: evfcgid as a user's shell starts
# it (soft limit 1024, hard HARD) on a free port; sets EVFCGID_PORT and
# EVFCGID_PID.
start_soft1024() {
	local log=$T/$1.log hardl=$2
	shift 2
	EVFCGID_PORT=$(freeport)
	EVFCGID_LOG=$log
	spawn bash -c 'ulimit -Sn 1024 && ulimit -Hn "$1" && shift && exec "$@"' \
		sh "$hardl" "$EVFCGID" --listen "127.0.0.1:$EVFCGID_PORT" "$@" 2>"$log"
	EVFCGID_PID=$SPAWNED
	wait_port "$EVFCGID_PORT"
}

if [ "$hard" != unlimited ] && [ "$hard" -lt 4096 ]; then
	echo "# SKIP: the hard descriptor limit is $hard, below 4096"
	ok "skipped: the hard descriptor limit ($hard) is below 4096"
	finish
fi

# --- The limit raised, the default following it -------------------------
start_soft1024 short 4096
read -r mc <<<"$(status_of "127.0.0.1:$EVFCGID_PORT" max_conns)"
check "soft 1024, hard 4096: the soft limit raised to 4096 ($(soft_of "$EVFCGID_PID"))" \
	test "$(soft_of "$EVFCGID_PID")" = 4096
check "hard 4096: the default --max-conns is what it allows, 4032 ($mc)" \
	test "${mc:-0}" -eq 4032
check "hard 4096: said once, with the numbers" \
	test "$(grep -c 'RLIMIT_NOFILE 4096 (soft 1024, hard 4096) allows 4032 connections, fewer than the 16384' "$T/short.log")" -eq 1
start_soft1024 explicit 4096 --max-conns 100
read -r mc <<<"$(status_of "127.0.0.1:$EVFCGID_PORT" max_conns)"
check "an explicit --max-conns 100 wins ($mc), nothing said of descriptors" \
	eval 'test "${mc:-0}" -eq 100 && ! grep -q descriptors "$T/explicit.log"'

if [ "$hard" != unlimited ] && [ "$hard" -lt 16448 ]; then
	echo "# SKIP: the hard descriptor limit ($hard) is below 16448: the rest needs the whole default"
	finish
fi
start_soft1024 defaults "$hard"
addr=127.0.0.1:$EVFCGID_PORT
read -r mc <<<"$(status_of "$addr" max_conns)"
check "hard $hard: the default --max-conns is the budget's 16384 ($mc)" \
	test "${mc:-0}" -eq 16384
check "hard $hard: nothing said of descriptors" \
	eval '! grep -q descriptors "$T/defaults.log"'

# --- More than 1024 at once, on the defaults ------------------------------
# This shell's clients need their own descriptors.
ulimit -n $((IDLE + SLOW + 200)) 2>/dev/null
$NOREAD "$addr" $IDLE kept /hello >"$T/kept" 2>&1 &
PIDS+=("$!")
wait_until 40 grep -q '^answered' "$T/kept"
read -r _ kept _ <"$T/kept"
check "$IDLE kept connections, each answered once (${kept:-0})" \
	test "${kept:-0}" -eq $IDLE
"$FCGI_LOAD" -q -c $SLOW -n $SLOW --rcvbuf 4096 --read-size 4096 --pause 100 \
	-t 8 "$addr" '/stream?8388608' >/dev/null 2>&1 &
slow=$!
PIDS+=("$slow")
holding_at_least() {
	local h
	read -r h <<<"$(status_of "$addr" holding_sockets)"
	[ "${h:-0}" -ge "$1" ]
}
wait_until 10 holding_at_least $((SLOW * 9 / 10))
read -r conns holding r503 <<<"$(status_of "$addr" connections holding_sockets 503)"
echo "# on the defaults: $conns connections, $holding holding output, 503: $r503"
check "$((IDLE + SLOW)) connections at once (${conns:-0})" \
	test "${conns:-0}" -gt $((IDLE + SLOW * 9 / 10))
check "the slow readers hold output ($holding of $SLOW), no 503 ($r503)" \
	eval 'test "${holding:-0}" -ge $((SLOW * 9 / 10)) && test "${r503:-1}" -eq 0'
check "a fast /hello beside them answers" fcgi_hello "$addr" 5
finish
