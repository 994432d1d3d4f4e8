#!/bin/bash
# evfcgid behind the real nginx, run from a copy of nginx.conf.example
# (tests/frontends.sh): every route byte for byte through HTTP, the
# checks every front end passes (fe_battery: answers up to 8 MiB, HEAD then
# GET on one kept connection, a 5 MiB chunked upload, a client reset), kept
# upstream connections reused, several backends (TCP, unix, IPv6), the
# variants the experiment uses, the listen sndbuf reaching the kernel,
# /status kept to this machine, and
# the point of fastcgi_buffering off: a slow client's backpressure reaches
# the daemon, where with nginx's default buffering it never does.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }

# --- Every route, through the example as it is.
start_evfcgid --max-size 16m --max-body 8m
A=127.0.0.1:$EVFCGID_PORT
if start_fe nginx "example" "$A"; then
	http_route_checks "nginx" "$URL" $((16 << 20)) $((8 << 20))
	fe_battery "nginx" "$URL" "$A"
	check "nginx: the generated copy keeps fastcgi_buffering off and sndbuf=16k backlog=4096" \
		eval 'grep -q "fastcgi_buffering off;" "$FE_DIR/nginx.conf" && grep -q "sndbuf=16k backlog=4096;" "$FE_DIR/nginx.conf"'

	# Kept connections: nginx's keepalive pool serves many requests on a
	# few connections (at most one idle per worker when requests come one
	# at a time).
	workers=$(pgrep -P "$FRONTEND_PID" | wc -l)
	fe_backend_conns "$A" 30
	echo "# keepalive: 30 requests through nginx ($workers workers) opened $FE_CONNS backend connections"
	check "keepalive: 30 requests reached evfcgid (got $FE_REQS)" test "$FE_REQS" -eq 30
	check "keepalive: backend connections reused ($FE_CONNS new for 30 requests, $workers workers)" \
		test "$FE_CONNS" -le "$workers"
	http_check "keepalive: /status through nginx" "$URL/status" 200 "" application/json
	read -r req conns < <(json_numbers requests connections_total <"$HTTP_BODY")
	check "keepalive: /status shows requests ($req) > connections ($conns)" \
		test "${req:-0}" -gt "${conns:-0}"
	# /status is this machine's alone (location = /status); the rest is not.
	check_status_kept_local
	stop_fe
fi

# The control: without upstream keepalive every request is a connection,
# so the check above measures what it claims.
if start_fe nginx "keepalive=0" "$A" keepalive=0; then
	fe_backend_conns "$A" 10
	check "no keepalive (control): 10 requests, 10 backend connections (got $FE_CONNS)" \
		test "$FE_CONNS" -eq 10
	stop_fe
fi

# --- Several backends in the upstream: TCP, unix socket and IPv6 daemons.
sock=$T/b2.sock
spawn "$EVFCGID" --listen "unix:$sock" 2>"$T/b2.log"
p3=$(freeport)
spawn "$EVFCGID" --listen "[::1]:$p3" 2>"$T/b3.log"
wait_port "unix:$sock"
wait_port "[::1]:$p3"
r0=$(status_of "$A" requests)
if start_fe nginx "three backends" "$A,unix:$sock,[::1]:$p3"; then
	bad=0
	for i in $(seq 12); do
		curl -s -o "$T/rr" "$URL/big"
		cmp -s "$T/rr" "$T/exp/big" || bad=$((bad + 1))
	done
	check "three backends: 12 x /big byte for byte ($bad bad)" test "$bad" -eq 0
	ra=$(( $(status_of "$A" requests) - r0 - 1 ))
	ru=$(status_of "$sock" requests)
	echo "# three backends: requests served: tcp $ra, unix $((ru - 1)), [::1] (the rest)"
	check "three backends: the TCP daemon served some ($ra)" test "$ra" -gt 0
	check "three backends: the unix socket daemon served some ($((ru - 1)))" test "$((ru - 1))" -gt 0
	check "three backends: the [::1] daemon served some ($((12 - ra - ru + 1)))" \
		test "$((12 - ra - ru + 1))" -gt 0
	stop_fe
fi


# --- The variants the experiment runs serve the same bytes.
pattern 1048579 >"$T/exp.1m"
head -c 1048576 /dev/urandom >"$T/in.1m"
for v in buffered notemp nosndbuf; do
	if start_fe nginx "$v" "$A" "$v"; then
		http_check "nginx-$v: /big" "$URL/big" 200 "$T/exp/big"
		http_check "nginx-$v: /size?1048579" "$URL/size?1048579" 200 "$T/exp.1m"
		http_check "nginx-$v: /stream?1048579" "$URL/stream?1048579" 200 "$T/exp.1m"
		http_check "nginx-$v: POST /echo 1 MiB" "$URL/echo" 200 "$T/in.1m" "" "$T/in.1m"
		if [ "$v" = nosndbuf ] && command -v ss >/dev/null; then
			curl -s -o /dev/null --limit-rate 64k --max-time 3 "$URL/stream?16777216" &
			c=$!
			sleep 1.5
			echo "# nginx-nosndbuf: the kernel send buffer towards a slow client grew to" \
				"$(sndbuf_of "${URL##*:}") bytes (tcp_wmem max $(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_wmem))"
			kill "$c" 2>/dev/null
			wait "$c" 2>/dev/null
		fi
		stop_fe
	fi
done
check_blocking_fcgid_behind nginx "/size?1048579" "$T/exp.1m"

# --- Backpressure.  A client reading 64 MiB at 64 KiB/s: with
# fastcgi_buffering off (the example) evfcgid is still producing two
# seconds later, holding no more than about its high watermark; with
# nginx's default buffering, nginx has taken the whole answer into a temp
# file and the daemon is done.  The listen sndbuf is checked on the same
# connection: the kernel reports twice the size asked for.

start_evfcgid
B=127.0.0.1:$EVFCGID_PORT
check_backpressure_behind nginx "buffering off" "$B" sndbuf=16k 32768
if start_fe nginx "buffered backpressure" "$B" buffered; then
	check_absorbed "buffering on" "nginx spooled the 64 MiB and" "$B"
	stop_fe
fi

check "evfcgid still running" kill -0 "$EVFCGID_PID"
finish
