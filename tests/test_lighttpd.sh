#!/bin/bash
# evfcgid behind the real lighttpd, run from copies of
# lighttpd.conf.example (tests/frontends.sh) in its ways: evfcgid on its
# own, on a TCP port (also the example's unix socket and [::1]), and lighttpd
# starting evfcgid itself by bin-path with the socket on fd 0.  Every route
# byte for byte through HTTP, the checks every front end passes
# (fe_battery; a chunked upload answered 411, the price of the example's
# stream-request-body = 2), and the point of stream-response-body = 2:
# a slow client's backpressure reaches the daemon, where with 0 or 1
# lighttpd takes the whole answer and the daemon never notices.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$LIGHTTPD" ] || { not_ok "lighttpd is installed ($LIGHTTPD)"; finish; }

# lighttpd_stopped: the front end stop_fe stopped left by its normal way
# out: "server stopped by" in its log, and exit 0, or 1, which lighttpd
# 1.4.69 gave after that line in about one stop in twelve with six of
# these tests at once (never alone); killed by a signal it would be 128+.
lighttpd_stopped() {
	grep -q 'server stopped by' "$FE_DIR/error.log" && [ "$FE_RC" -le 1 ]
}

MAXSIZE=$((16 << 20))
MAXBODY=$((8 << 20))

# --- Way 1: evfcgid on its own port, every route.
start_evfcgid --max-size "$MAXSIZE" --max-body "$MAXBODY"
A=127.0.0.1:$EVFCGID_PORT
if start_fe lighttpd "host/port" "$A"; then
	http_route_checks "lighttpd" "$URL" "$MAXSIZE" "$MAXBODY"
	# The example streams request bodies (server.stream-request-body = 2):
	# a chunked one, whose length FastCGI must be told first, is refused.
	CHUNKED=411 fe_battery "lighttpd" "$URL" "$A"
	check "lighttpd: the generated copy keeps stream-response-body = 2 and check-local disabled" \
		eval 'grep -q "^server.stream-response-body = 2" "$FE_DIR/lighttpd.conf" &&
		      grep -q "\"check-local\" => \"disable\"" "$FE_DIR/lighttpd.conf"'
	fe_backend_conns "$A" 10
	echo "# lighttpd: 10 requests took $FE_CONNS backend connections (lighttpd 1.4 keeps none)"
	check "lighttpd: 10 requests reached evfcgid (got $FE_REQS)" test "$FE_REQS" -eq 10
	# /status is this machine's alone; the rest is not.
	check_status_kept_local
	stop_fe
	check "lighttpd: SIGTERM stops it by its own way out (exit $FE_RC)" lighttpd_stopped
fi

# The same way over a unix socket and over IPv6 (NAME=ADDRESS).
for be in "unix socket=unix:$T/evfcgid.sock" "[::1]=[::1]:$(freeport)"; do
	name=${be%%=*} addr=${be#*=}
	spawn "$EVFCGID" --listen "$addr" 2>"$T/$name.log"
	wait_port "$addr"
	if start_fe lighttpd "$name" "$addr"; then
		http_check "lighttpd, $name backend: /hello" "$URL/hello" 200 "$T/exp/hello" text/plain
		http_check "lighttpd, $name backend: /big" "$URL/big" 200 "$T/exp/big"
		stop_fe
	fi
done

# --- Way 2: lighttpd starts evfcgid itself (bin-path, socket on fd 0).
if start_fe lighttpd "bin-path" "spawn:$EVFCGID --max-size $MAXSIZE --max-body $MAXBODY"; then
	# lighttpd may open its port before it forks and execs the backend:
	# its child is looked for (as evfcgid, not a fork not yet exec'd) for
	# up to 5 s.
	child=
	for ((i = 0; i < 50; i++)); do
		for c in $(pgrep -P "$FRONTEND_PID"); do
			[ "$(readlink "/proc/$c/exe")" = "$(readlink -f "$EVFCGID")" ] && child=$c
		done
		[ -n "$child" ] && break
		nap 0.1
	done
	check "bin-path: lighttpd started evfcgid" test -n "$child"
	if [ -n "$child" ]; then
		PIDS+=("$child")
		check "bin-path: evfcgid has no --listen" \
			eval '! tr "\0" " " <"/proc/$child/cmdline" | grep -q -- --listen'
		check "bin-path: its fd 0 is a socket" \
			eval '[[ $(readlink "/proc/$child/fd/0") == socket:* ]]'
	fi
	check "bin-path: the socket is the example's with -0 appended" test -S "$FE_DIR/backend.sock-0"
	http_route_checks "lighttpd bin-path" "$URL" "$MAXSIZE" "$MAXBODY"
	check "bin-path: evfcgid answers on the socket directly too" \
		eval '[ -n "$(status_of "$FE_DIR/backend.sock-0" requests)" ]'
	stop_fe
	check "bin-path: SIGTERM stops lighttpd by its own way out (exit $FE_RC)" lighttpd_stopped
	check "bin-path: lighttpd stopped evfcgid on its way out" wait_gone 5 "$child"
fi

check_blocking_fcgid_behind lighttpd

# --- Backpressure.  A client reading 64 MiB at 64 KiB/s: with
# stream-response-body = 2 evfcgid is still producing two seconds later
# and holds about its high watermark; with 0 or 1 lighttpd reads the whole
# answer into temp files and the daemon is done.  The kernel send buffer
# towards the slow client is printed: no lighttpd setting caps it.

start_evfcgid
B=127.0.0.1:$EVFCGID_PORT
check_backpressure_behind lighttpd "stream-response-body 2" "$B"
for s in 0 1; do
	if start_fe lighttpd "stream $s" "$B" "stream=$s"; then
		check_absorbed "stream-response-body $s" "lighttpd took the 64 MiB," "$B"
		stop_fe
	fi
done

check "evfcgid still running" kill -0 "$EVFCGID_PID"
finish
