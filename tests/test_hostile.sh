#!/bin/bash
# Limits a peer runs into, as processes: out of descriptors (accept backs
# off and says so once per episode, not every 200 ms, then works again);
# a request begun and abandoned while others go on, and a record dribbled
# a byte at a time (each closes its connection at the header timeout).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

# --- EMFILE: 40 idle connections against a daemon allowed 24 descriptors
# (and --max-conns 100: by default it would take what the descriptors
# allow, and never meet EMFILE).
EVFCGID_PORT=$(freeport)
EVFCGID_LOG=$T/emfile.log
spawn bash -c "ulimit -n 24 && exec '$EVFCGID' --listen 127.0.0.1:$EVFCGID_PORT --max-conns 100 2>'$EVFCGID_LOG'"
EVFCGID_PID=$SPAWNED
wait_port "$EVFCGID_PORT"
# wait_port's probe must be closed on the daemon's side first: closed
# while it was out of descriptors, it freed one, an accept worked, and a
# second episode began (2 'pausing' on a busy machine).
probe_closed() { [ -z "$(ss -Htn "( sport = :$EVFCGID_PORT )")" ]; }
wait_until 5 probe_closed
fds=()
for i in $(seq 40); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$EVFCGID_PORT" && fds+=("$fd")
done
sleep 3
pauses=$(grep -c 'pausing accept' "$EVFCGID_LOG")
lines=$(grep -c 'accept:' "$EVFCGID_LOG")
echo "# out of descriptors for 3 s: $lines accept lines in the log ($pauses 'pausing')"
check "EMFILE: the back-off is logged once, not every 200 ms ($pauses)" test "$pauses" -eq 1
check "EMFILE: at most one more line while it lasts ($lines)" test "$lines" -le 2
for fd in "${fds[@]}"; do exec {fd}>&-; done
sleep 0.5
check "EMFILE: serves again once descriptors are free" fcgi_hello "127.0.0.1:$EVFCGID_PORT" 5
check "EMFILE: the end of the episode is logged" grep -q 'accepting again after' "$EVFCGID_LOG"
kill -0 "$EVFCGID_PID" 2>/dev/null && ok "EMFILE: evfcgid still running" || not_ok "EMFILE: evfcgid still running"

# --- Abandoned and dribbled: --header-timeout 2, --idle-timeout 3.
EVFCGID_PORT=$(freeport)
spawn "$EVFCGID" --listen 127.0.0.1:$EVFCGID_PORT --header-timeout 2 \
	--idle-timeout 3 2>"$T/hostile.log"
wait_port "$EVFCGID_PORT"
# in_window LINE: "closed after S s" with S from 1.5 to 3.5.
in_window() { awk '$1 == "closed" && $3 >= 1.5 && $3 <= 3.5 { ok = 1 } END { exit !ok }' <<<"$1"; }
# Request 1 begun, part of its PARAMS, then nothing; /hello as request 2
# every 0.1 s beside it.  Before: still open after 5 s (each /hello's
# PARAMS ending restarted the clock of the oldest request).
line=$(python3 "$TOP/tests/fcgi_hostile.py" "$EVFCGID_PORT" abandon 5)
echo "# abandoned id, /hello beside it: $line"
check "abandoned id: closed at the header timeout while others are served" \
	in_window "$line"
check "abandoned id: the others were served meanwhile" \
	awk '$5 > 5 { ok = 1 } END { exit !ok }' <<<"$line"
# One byte every 2 s (the idle timeout less one), never a whole record.
line=$(python3 "$TOP/tests/fcgi_hostile.py" "$EVFCGID_PORT" dribble 8 2)
echo "# one byte every 2 s: $line"
check "dribble: a record unfinished at the header timeout closes" \
	in_window "$line"
check "abandoned, dribble: logged as timeouts" \
	test "$(grep -c 'timeout' "$T/hostile.log")" -ge 2
finish
