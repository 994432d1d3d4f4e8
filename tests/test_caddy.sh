#!/bin/bash
# evfcgid behind the real Caddy 2 (reverse_proxy with the fastcgi
# transport), run from a copy of Caddyfile.example (tests/frontends.sh):
# every route byte for byte, answers up to 8 MiB, HEAD then GET on one
# kept connection, 5 MiB uploads with Content-Length and chunked, a client
# reset mid-answer, a backend connection per request (the fastcgi
# transport keeps none), /status kept to this machine, and a slow client
# (scaled down; the real-speed run is tests/soak-frontends, in make soak),
# with its control: a read_timeout, a deadline for the whole answer, cuts
# that client.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }
[ -x "$CADDY" ] || { not_ok "caddy is installed ($CADDY; make deps)"; finish; }

start_evfcgid --max-size 16m --max-body 8m
A=127.0.0.1:$EVFCGID_PORT A_PID=$EVFCGID_PID
if start_fe caddy "example" "$A"; then
	check "caddy: the generated copy keeps flush_interval -1 and sets no read_timeout" \
		eval 'grep -q "^[[:space:]]*flush_interval -1$" "$FE_DIR/Caddyfile" &&
			! grep -q "^[[:space:]]*read_timeout" "$FE_DIR/Caddyfile"'
	http_route_checks "caddy" "$URL" $((16 << 20)) $((8 << 20))
	fe_battery "caddy" "$URL" "$A"

	# The fastcgi transport dials evfcgid for every request and closes
	# the connection after it (Caddyfile.example says so).
	fe_backend_conns "$A" 30
	echo "# 30 requests through caddy opened $FE_CONNS backend connections"
	check "30 requests reached evfcgid (got $FE_REQS)" test "$FE_REQS" -eq 30
	check "a backend connection per request, as the example says ($FE_CONNS for 30)" \
		test "$FE_CONNS" -eq 30
	check_status_kept_local
	stop_fe
fi

# --- Backpressure: a client reading 64 MiB at 64 KiB/s; two seconds later
# evfcgid is still producing it and holds about a watermark.
start_evfcgid
check_backpressure_behind caddy "caddy" "127.0.0.1:$EVFCGID_PORT"

# --- A slow client.  http_get reads 512 bytes every 1000/K ms (at most K
# times 512 B/s; see tests/test_slow_clients.sh for the scale).  The
# example sets no deadline on the answer, so it gets all of it; the
# control, at the same time, sets the fastcgi transport's read_timeout to
# 60 s divided by K: Caddy stops reading evfcgid when that deadline
# passes, however well the client reads, and the client gets what was
# already on its way (the kernel's autotuned send buffer towards it: Caddy
# has no knob to cap it), then a closed connection.
K=500
check_slow_pair caddy "$A" "$K" 4194304 60 "the example" "" \
	"read_timeout $((60000 / K))ms" "read_timeout=$((60000 / K))ms"

check "both evfcgid still running" kill -0 "$A_PID" "$EVFCGID_PID"
finish
