#!/bin/bash
# evfcgid through an independent FastCGI client, libfcgi's cgi-fcgi
# (CGI variables from the environment, the body on stdin): every route
# byte for byte, /size and /stream around record and buffer boundaries,
# a multi-megabyte /echo, the 400/404/413 answers, unix and IPv6
# listeners, and the command line's own errors.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed (libfcgi-bin)"; finish; }
command -v perl >/dev/null || { not_ok "perl is installed"; finish; }

# --- Every route, byte for byte.
start_evfcgid --max-size 2m --max-body 8m
A=127.0.0.1:$EVFCGID_PORT

printf 'Hello World\n' >"$T/hello"
fcgi_check "/hello: Hello World, text/plain" "$A" /hello 200 "$T/hello" text/plain
pattern 96256 >"$T/big"
fcgi_check "/big: 96256 pattern bytes" "$A" /big 200 "$T/big"

for n in 0 1 7 8 9 63 64 65 65527 65528 65535 65536 65537 96256 131072 1048579; do
	pattern "$n" >"$T/exp.$n"
	fcgi_check "/size?$n: exactly $n bytes" "$A" "/size?$n" 200 "$T/exp.$n"
done
for n in 0 1 8 65535 65536 65537 1048579; do
	fcgi_check "/stream?$n: exactly $n bytes" "$A" "/stream?$n" 200 "$T/exp.$n"
done
pattern 2097152 >"$T/exp.max"
fcgi_check "/size?N at --max-size (2 MiB): served" "$A" "/size?2097152" 200 "$T/exp.max"
fcgi_check "/size?N one above --max-size: 413" "$A" "/size?2097153" 413
fcgi_check "/stream?N one above --max-size: 413" "$A" "/stream?2097153" 413

head -c 5242880 /dev/urandom >"$T/in.5m"
fcgi_check "/echo: 5 MiB of random bytes back byte for byte" "$A" /echo 200 "$T/in.5m" "" "$T/in.5m"
head -c 65537 /dev/urandom >"$T/in.64k"
fcgi_check "/echo: 65537 random bytes back" "$A" /echo 200 "$T/in.64k" "" "$T/in.64k"
: >"$T/empty"
fcgi_check "/echo: an empty body back" "$A" /echo 200 "$T/empty" "" "$T/empty"
head -c 8388609 /dev/zero >"$T/in.8m1"
fcgi_check "/echo: one byte above --max-body (8 MiB): 413" "$A" /echo 413 "" "" "$T/in.8m1"

start=$(now_ns)
printf 'slept 300 ms\n' >"$T/slept"
fcgi_check "/sleep?300: the answer" "$A" "/sleep?300" 200 "$T/slept"
ms=$(ms_since "$start")
check "/sleep?300: took at least 300 ms ($ms ms)" test "$ms" -ge 300

fcgi_check "/status: 200, application/json" "$A" /status 200 "" application/json
st=$RESP.b
missing=""
for k in connections requests bytes_queued peak_bytes_queued stalled_sockets limits; do
	grep -q "\"$k\":" "$st" || missing+=" $k"
done
check "/status: has connections, requests, queue and limits${missing:+ (missing:$missing)}" test -z "$missing"
if command -v jq >/dev/null; then
	check "/status: valid JSON (jq)" eval 'jq -e . "$st" >/dev/null'
elif perl -MJSON::PP -e 1 2>/dev/null; then
	check "/status: valid JSON (JSON::PP)" perl -MJSON::PP -0777 -ne 'decode_json($_)' "$st"
fi

fcgi_check "/nope: 404" "$A" /nope 404
fcgi_check "/hello/more: 404 (routes are exact paths)" "$A" /hello/more 404
fcgi_check "/size?abc: 400" "$A" "/size?abc" 400
fcgi_check "/size without N: 400" "$A" "/size" 400
fcgi_check "/stream?12x: 400" "$A" "/stream?12x" 400
fcgi_check "/sleep?soon: 400" "$A" "/sleep?soon" 400

# The path comes from REQUEST_URI, the query from QUERY_STRING; without
# REQUEST_URI, SCRIPT_NAME + PATH_INFO.
check_path_info_route "$A"

check "the daemon is still running" kill -0 "$EVFCGID_PID"
kill -TERM "$EVFCGID_PID"
wait "$EVFCGID_PID"
rc=$?
check "SIGTERM: exit 0 (got $rc)" test "$rc" -eq 0

# --- A unix socket listener.
sock=$T/evfcgid.sock
spawn "$EVFCGID" --listen "unix:$sock" 2>"$T/unix.log"
wait_port "unix:$sock"
fcgi_check "unix socket: /hello" "$sock" /hello 200 "$T/hello"
fcgi_check "unix socket: /big" "$sock" /big 200 "$T/big"
fcgi_check "unix socket: /echo 64 KiB + 1" "$sock" /echo 200 "$T/in.64k" "" "$T/in.64k"

# --- An IPv6 listener.  libfcgi's cgi-fcgi only speaks IPv4, so this is
# the perl client of tests/http.sh.
port=$(freeport)
spawn "$EVFCGID" --listen "[::1]:$port" 2>"$T/v6.log"
v6pid=$SPAWNED
wait_port "[::1]:$port"
fcgi_client_check "[::1]:PORT: /hello" "[::1]:$port" /hello 200 "$T/hello" text/plain
fcgi_client_check "[::1]:PORT: /big" "[::1]:$port" /big 200 "$T/big"
grep -q 'listening on \[::1\]' "$T/v6.log" && ok "[::1]: logs where it listens" ||
	not_ok "[::1]: logs where it listens"
kill "$v6pid"

# --- The command line: clear errors, non-zero exits; --help and --version.

exits_with "a bad flag: non-zero exit, names the flag" nonzero 'bogus' \
	"$EVFCGID" --bogus --listen 127.0.0.1:1
exits_with "a flag without its value: non-zero exit" nonzero 'listen|argument|requires' \
	"$EVFCGID" --listen
exits_with "a non-numeric --max-conns: non-zero exit, says which" nonzero 'max-conns' \
	"$EVFCGID" --max-conns lots --listen 127.0.0.1:1
exits_with "a non-numeric --sndbuf: non-zero exit, says which" nonzero 'sndbuf' \
	"$EVFCGID" --sndbuf lots --listen 127.0.0.1:1
busy=$(freeport)
spawn "$EVFCGID" --listen "127.0.0.1:$busy" 2>/dev/null
busypid=$SPAWNED
wait_port "$busy"
exits_with "a port in use: non-zero exit, says so" nonzero "127\.0\.0\.1:$busy.*(in use|bind)|(in use|bind).*127\.0\.0\.1:$busy" \
	"$EVFCGID" --listen "127.0.0.1:$busy"
kill "$busypid"
exits_with "an address not on this host: non-zero exit, says so" nonzero '192\.0\.2\.1' \
	"$EVFCGID" --listen "192.0.2.1:$(freeport)"
exits_with "a malformed address: non-zero exit, names it" nonzero 'nonsense' \
	"$EVFCGID" --listen nonsense
exits_with "a unix socket in a missing directory: non-zero exit, names it" nonzero "$T/no/such" \
	"$EVFCGID" --listen "unix:$T/no/such/dir.sock"
exits_with "--help: exit 0, lists --listen" 0 '--listen' "$EVFCGID" --help
exits_with "-h: exit 0" 0 'usage' "$EVFCGID" -h
exits_with "--version: exit 0, says evfcgid and a version" 0 'evfcgid [0-9]+\.[0-9]+' "$EVFCGID" --version
exits_with "-V: exit 0" 0 'evfcgid' "$EVFCGID" -V

finish
