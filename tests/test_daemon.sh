#!/bin/bash
# The daemon as a process: signals (drain, deadline, log reopen), fd 0
# from spawn-fcgi, the connection cap, unix socket files, and garbage input
# that closes one connection while the daemon stays up.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

# --- SIGTERM finishes the request in flight, then exits 0.
start_evfcgid
fcgi_req "127.0.0.1:$EVFCGID_PORT" "/sleep?1500" >"$T/slept" &
req=$!
sleep 0.4
kill -TERM "$EVFCGID_PID"
sleep 0.3
if port_accepts "$EVFCGID_PORT"; then
	not_ok "SIGTERM: listener closed during the drain"
else
	ok "SIGTERM: listener closed during the drain"
fi
wait "$req"
check "SIGTERM: the request in flight completed" grep -q '^slept 1500 ms$' "$T/slept"
wait "$EVFCGID_PID"
rc=$?
check "SIGTERM: exit status 0 after the drain (got $rc)" test "$rc" -eq 0

# --- The drain deadline ends a request that would take too long.
start_evfcgid --drain-timeout 1
fcgi_req "127.0.0.1:$EVFCGID_PORT" "/sleep?30000" >/dev/null 2>&1 &
req=$!
sleep 0.3
start=$(now_ns)
kill -TERM "$EVFCGID_PID"
wait "$EVFCGID_PID"
ms=$(ms_since "$start")
echo "# drain with a 30 s request and --drain-timeout 1 took $ms ms"
check "drain deadline: exit within 2 s ($ms ms)" test "$ms" -lt 2000
grep -q 'drain deadline' "$EVFCGID_LOG" && ok "drain deadline: logged" ||
	not_ok "drain deadline: logged"
wait "$req" 2>/dev/null

# --- SIGHUP reopens the log file (rotation).
port=$(freeport)
spawn "$EVFCGID" --listen "127.0.0.1:$port" --log-file "$T/d.log"
pid=$SPAWNED
wait_port "$port"
mv "$T/d.log" "$T/d.log.1"
kill -HUP "$pid"
wait_file "$T/d.log" 5
check "SIGHUP: the log file is reopened at its path" grep -q 'log reopened' "$T/d.log"
check "SIGHUP: the daemon still serves" fcgi_hello "127.0.0.1:$port"
grep -q 'listening on' "$T/d.log.1" && ok "SIGHUP: the old log kept its lines" ||
	not_ok "SIGHUP: the old log kept its lines"
kill "$pid"

# --- fd 0: spawn-fcgi binds the socket and starts evfcgid with it on fd 0.
port=$(freeport)
spawn spawn-fcgi -n -a 127.0.0.1 -p "$port" -- "$EVFCGID"
wait_port "$port"
check "fd 0 from spawn-fcgi: /hello" fcgi_hello "127.0.0.1:$port"
out=$("$EVFCGID" </dev/null 2>&1)
rc=$?
check "no --listen and no socket on fd 0: exit 2 (got $rc)" test "$rc" -eq 2
check "no --listen and no socket on fd 0: says why" \
	grep -q 'fd 0 is not a listening socket' <<<"$out"

# --- The connection cap: accept pauses at the cap and resumes below it.
start_evfcgid --max-conns 2
exec 5<>"/dev/tcp/127.0.0.1/$EVFCGID_PORT"
exec 6<>"/dev/tcp/127.0.0.1/$EVFCGID_PORT"
sleep 0.2
if timeout 1 cgi-fcgi -bind -connect "127.0.0.1:$EVFCGID_PORT" </dev/null \
    >/dev/null 2>&1; then
	not_ok "max-conns 2: a third connection waits"
else
	ok "max-conns 2: a third connection waits"
fi
exec 5>&- 6>&-
sleep 0.2
check "max-conns 2: served again once one closed" fcgi_hello "127.0.0.1:$EVFCGID_PORT"
grep -q 'not accepting until one closes' "$EVFCGID_LOG" &&
	ok "max-conns 2: logged" || not_ok "max-conns 2: logged"

# --- Garbage closes its own connection; the daemon goes on.  Bash writes
# the request a line at a time, so the daemon may close after the first
# line and answer the rest with a reset: the writes ignore SIGPIPE, and
# "closed" means the read ends (EOF or reset) before the 2 s timeout.
exec 5<>"/dev/tcp/127.0.0.1/$EVFCGID_PORT"
(trap '' PIPE; printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' >&5) 2>/dev/null
timeout 2 cat <&5 >/dev/null 2>&1
rc=$?
check "HTTP sent to the FastCGI port: connection closed (read ended: $rc)" test "$rc" -ne 124
exec 5>&-
check "after garbage: still serving" fcgi_hello "127.0.0.1:$EVFCGID_PORT"
check "after garbage: logged the reason" grep -q 'bad version' "$EVFCGID_LOG"

# --- Unix sockets: a stale file is replaced, a live one is refused.
sock=$T/evfcgid.sock
spawn "$EVFCGID" --listen "unix:$sock" --socket-mode 0600
pid=$SPAWNED
wait_port "unix:$sock"
sleep 0.2
check "unix socket: mode 0600" test "$(stat -c %a "$sock")" = 600
check "unix socket: /hello" fcgi_hello "$sock"
out=$("$EVFCGID" --listen "unix:$sock" 2>&1)
rc=$?
check "unix socket in use: refused (exit $rc)" test "$rc" -ne 0
check "unix socket in use: says so" grep -q 'another server is listening' <<<"$out"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
check "unix socket: stale file left by kill -9" test -S "$sock"
spawn "$EVFCGID" --listen "unix:$sock"
pid=$SPAWNED
wait_port "unix:$sock"
check "unix socket: stale file replaced" fcgi_hello "$sock"
kill -TERM "$pid"
wait "$pid"
check "unix socket: file removed on exit" test ! -e "$sock"

# --- --workers: N processes share the listener; SIGTERM ends them all.
start_evfcgid --workers 3
sleep 0.3
check "workers: 3 worker processes" test "$(pgrep -P "$EVFCGID_PID" | wc -l)" -eq 3
for i in $(seq 12); do
	fcgi_req "127.0.0.1:$EVFCGID_PORT" /status | grep -o '"pid":[0-9]*'
done >"$T/pids"
check "workers: 12 requests answered" test "$(wc -l <"$T/pids")" -eq 12
echo "# workers: answers per process: $(sort "$T/pids" | uniq -c | tr -s ' \n' ' ')"
kids=$(pgrep -P "$EVFCGID_PID")
kill -TERM "$EVFCGID_PID"
wait "$EVFCGID_PID"
rc=$?
check "workers: SIGTERM: exit 0 (got $rc)" test "$rc" -eq 0
alive=0
for k in $kids; do kill -0 "$k" 2>/dev/null && alive=$((alive + 1)); done
check "workers: no worker left running" test "$alive" -eq 0

finish
