#!/bin/bash
# tools/blocking_fcgid, the blocking libfcgi control group: every route
# byte for byte through cgi-fcgi (the same bytes as evfcgid), threads that
# share the accept (parallel /sleep), TCP, IPv6, unix and fd 0 listeners,
# the command line's errors, and the behaviour it exists to show: with one
# thread, a client that never reads a large answer stalls everyone else.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

for c in cgi-fcgi perl "$BFCGID"; do
	command -v "$c" >/dev/null || { not_ok "$c is available"; finish; }
done

# sleeps4 ADDR: four /sleep?500 at once; prints how long they took (ms)
# and fails unless all four answered.
sleeps4() {
	local t0 i pids=() bad=0
	t0=$(now_ns)
	for i in 1 2 3 4; do
		fcgi_req "$1" "/sleep?500" >"$T/sleep4.$i" 2>/dev/null &
		pids+=($!)
	done
	wait "${pids[@]}"
	ms_since "$t0"
	for i in 1 2 3 4; do
		grep -q '^slept 500 ms$' "$T/sleep4.$i" || bad=1
	done
	return $bad
}

STALLS=()
# stall ADDR: a client that asks for 8 MiB and never reads (fcgi_stall);
# waits until the answer has begun.  Adds its pid to STALLS.
stall() {
	fcgi_stall "$1" "/size?8388608"
	STALLS+=("$SPAWNED")
	sleep 0.3	# let the kernel buffers fill
}

# --- One thread: every route, byte for byte.
start_blocking_fcgid -t 1
A=$BFCGID_ADDR PID=$BFCGID_PID
printf 'Hello World\n' >"$T/hello"
fcgi_check "/hello: Hello World, text/plain" "$A" /hello 200 "$T/hello" text/plain
pattern 96256 >"$T/big"
fcgi_check "/big: 96256 pattern bytes" "$A" /big 200 "$T/big" text/plain
for n in 0 1 65535 65536 1048579; do
	pattern "$n" >"$T/exp.$n"
	fcgi_check "/size?$n: exactly $n pattern bytes" "$A" "/size?$n" 200 "$T/exp.$n"
done
pattern 200000 >"$T/exp.200000"
fcgi_check "/stream?200000: exactly 200000 pattern bytes" "$A" "/stream?200000" 200 "$T/exp.200000"
fcgi_check "/stream?65536: exactly 65536 pattern bytes" "$A" "/stream?65536" 200 "$T/exp.65536"
head -c 3145728 /dev/urandom >"$T/in.3m"
fcgi_check "/echo: 3 MiB of random bytes back, application/octet-stream" "$A" /echo 200 \
	"$T/in.3m" application/octet-stream "$T/in.3m"
: >"$T/empty"
fcgi_check "/echo: an empty body back" "$A" /echo 200 "$T/empty" "" "$T/empty"
t0=$(now_ns)
printf 'slept 50 ms\n' >"$T/slept50"
fcgi_check "/sleep?50: the answer" "$A" "/sleep?50" 200 "$T/slept50" text/plain
ms=$(ms_since "$t0")
check "/sleep?50: took at least 50 ms ($ms ms)" test "$ms" -ge 50
fcgi_check "/status: 200, application/json" "$A" /status 200 "" application/json
r1=$(body_of <"$RESP")
check "/status: pid, threads 1, requests, active ($r1)" \
	grep -qE "^\{\"pid\":$PID,\"threads\":1,\"requests\":[0-9]+,\"active\":1\}\$" <<<"$r1"
n1=$(sed -n 's/.*"requests":\([0-9]*\).*/\1/p' <<<"$r1")
fcgi_check "/hello again" "$A" /hello 200 "$T/hello"
n2=$(status_of "$A" requests)
check "/status: the request count grows ($n1, then $n2)" test "${n2:-0}" -gt "${n1:-0}"
fcgi_check "/nope: 404" "$A" /nope 404
fcgi_check "/size?x: 400" "$A" "/size?x" 400
fcgi_check "/size without N: 400" "$A" /size 400
fcgi_check "/size?2000000000: 413 (above 1 GiB)" "$A" "/size?2000000000" 413
fcgi_check "/sleep?soon: 400" "$A" "/sleep?soon" 400
fcgi_check "/sleep?3600001: 400" "$A" "/sleep?3600001" 400
printf '404 Not Found\n' >"$T/404"
fcgi_check "404 body as evfcgid's" "$A" /hello/more 404 "$T/404" text/plain
check_path_info_route "$A"

# --- The stall it exists to show.
ms=$(sleeps4 "$A")
check "-t 1: four /sleep?500 at once answer, one after another ($ms ms >= 2000)" \
	test "$?" -eq 0 -a "$ms" -ge 2000
stall "$A"
if fcgi_hello "$A" 3; then
	not_ok "-t 1: a client not reading /size?8388608 stalls /hello (it answered)"
else
	ok "-t 1: a client not reading /size?8388608 stalls /hello (none in 3 s)"
fi
kill "${STALLS[@]}"
STALLS=()
check "-t 1: once that client is gone, /hello answers again" fcgi_hello "$A" 5
check "-t 1: the server survived the failed write" kill -0 "$PID"
kill -TERM "$PID"
wait "$PID"
rc=$?
check "SIGTERM: exit 0 (got $rc)" test "$rc" -eq 0

# --- Four threads share the accept.
start_blocking_fcgid -t 4
B=$BFCGID_ADDR
check "-t 4: /status says threads 4" test "$(status_of "$B" threads)" = 4
ms=$(sleeps4 "$B")
check "-t 4: four /sleep?500 at once answer in parallel ($ms ms < 1500)" \
	test "$?" -eq 0 -a "$ms" -lt 1500
stall "$B"
check "-t 4: one client not reading, /hello still answers" fcgi_hello "$B" 3
stall "$B"; stall "$B"; stall "$B"
if fcgi_hello "$B" 3; then
	not_ok "-t 4: four clients not reading stall /hello (it answered)"
else
	ok "-t 4: four clients not reading stall /hello (none in 3 s)"
fi
kill "${STALLS[@]}"
check "-t 4: once they are gone, /hello answers again" fcgi_hello "$B" 5

# --- Other listeners.
sock=$T/b.sock
spawn "$BFCGID" --listen "unix:$sock" 2>>"$T/bfcgid.log"
upid=$SPAWNED
wait_port "unix:$sock"
fcgi_check "unix socket: /hello" "$sock" /hello 200 "$T/hello"
fcgi_check "unix socket: /big" "$sock" /big 200 "$T/big"
out=$(timeout 5 "$BFCGID" --listen "unix:$sock" 2>&1)
rc=$?
check "unix socket in use by a live server: exit 1 ($rc), says so" \
	test "$rc" -eq 1 -a -n "$(grep -i listening <<<"$out")"
kill -TERM "$upid"
wait "$upid"
check "unix socket: SIGTERM removes the socket file" test ! -e "$sock"
# A stale socket file, as a crashed server leaves it: bound, nobody listening.
perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die;
	bind($s, pack_sockaddr_un($ARGV[0])) or die "bind: $!"' "$sock"
check "unix socket: a stale socket file made" test -S "$sock"
spawn "$BFCGID" --listen "unix:$sock" 2>>"$T/bfcgid.log"
upid=$SPAWNED
wait_port "unix:$sock"
fcgi_check "unix socket: a stale socket file is replaced" "$sock" /hello 200 "$T/hello"
kill -TERM "$upid"

port=$(freeport)
spawn "$BFCGID" --listen "[::1]:$port" 2>>"$T/bfcgid.log"
wait_port "[::1]:$port"
fcgi_client_check "[::1]:PORT: /hello" "[::1]:$port" /hello 200 "$T/hello" text/plain

if command -v spawn-fcgi >/dev/null; then
	port=$(freeport)
	spawn spawn-fcgi -p "$port" -a 127.0.0.1 -n -- "$BFCGID" 2>>"$T/bfcgid.log"
	wait_port "$port"
	fcgi_check "fd 0 (spawn-fcgi -n): /hello" "127.0.0.1:$port" /hello 200 "$T/hello"
	pattern 65537 >"$T/exp.65537"
	fcgi_check "fd 0 (spawn-fcgi -n): /size?65537" "127.0.0.1:$port" "/size?65537" 200 \
		"$T/exp.65537"
else
	echo "# spawn-fcgi is not installed: fd 0 untested"
fi

# --- The command line.

exits_with "a bad flag: exit 2, names it" 2 'bogus' "$BFCGID" --bogus </dev/null
exits_with "-t 0: exit 2, says why" 2 'thread' "$BFCGID" -t 0 --listen 127.0.0.1:1
exits_with "-t lots: exit 2, says why" 2 'thread' "$BFCGID" --threads lots
exits_with "a malformed --listen: exit 2, names it" 2 'nonsense' "$BFCGID" --listen nonsense
exits_with "no --listen, fd 0 not a socket: exit 2, says so" 2 'fd 0' "$BFCGID" </dev/null
exits_with "a port in use: exit 1, says so" 1 "${B#*:}.*in use" "$BFCGID" --listen "$B"
exits_with "--help: exit 0, explains -t and the control group" 0 \
	'-t, --threads.*' "$BFCGID" --help
exits_with "--help: says it is the blocking control group" 0 'blocking control group' \
	"$BFCGID" --help
exits_with "--version: exit 0" 0 'blocking_fcgid [0-9]' "$BFCGID" --version

finish
