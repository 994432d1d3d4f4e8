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
HTTP_GET=$TOP/tools/http_get

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }
[ -x "$CADDY" ] || { not_ok "caddy is installed ($CADDY; make deps)"; finish; }

start_evfcgid --max-size 16m --max-body 8m
A=127.0.0.1:$EVFCGID_PORT A_PID=$EVFCGID_PID
if start_fe_more caddy "example" "$A"; then
	check "caddy: the generated copy keeps flush_interval -1 and sets no read_timeout" \
		eval 'grep -q "^[[:space:]]*flush_interval -1$" "$FE_DIR/Caddyfile" &&
			! grep -q "^[[:space:]]*read_timeout" "$FE_DIR/Caddyfile"'
	http_route_checks "caddy" "$URL" $((16 << 20)) $((8 << 20))
	fe_battery "caddy" "$URL" "$A"

	# The fastcgi transport dials evfcgid for every request and closes
	# the connection after it (Caddyfile.example says so).
	read -r c0 r0 <<<"$(status_of "$A" connections_total requests)"
	for i in $(seq 30); do curl -s -o /dev/null "$URL/hello"; done
	read -r c1 r1 <<<"$(status_of "$A" connections_total requests)"
	dc=$((c1 - c0 - 1))
	dr=$((r1 - r0 - 1))
	echo "# 30 requests through caddy opened $dc backend connections"
	check "30 requests reached evfcgid (got $dr)" test "$dr" -eq 30
	check "a backend connection per request, as the example says ($dc for 30)" test "$dc" -eq 30

	code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/status")
	check "the example serves /status to this machine ($code)" test "$code" = 200
	code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$URL/status?format=prometheus")
	check "the example keeps /status from other clients (127.0.0.2: $code)" test "$code" = 403
	code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$URL/hello")
	check "... and serves them the rest (127.0.0.2 /hello: $code)" test "$code" = 200
	stop_fe
fi

# --- Backpressure: a client reading 64 MiB at 64 KiB/s; two seconds later
# evfcgid is still producing it and holds about a watermark.
start_evfcgid
B=127.0.0.1:$EVFCGID_PORT
if start_fe_more caddy "backpressure" "$B"; then
	check_backpressure "caddy" "$B"
	kill "$SLOW_PID" 2>/dev/null
	stop_fe
fi

# --- A slow client.  http_get reads 512 bytes every 1000/K ms (at most K
# times 512 B/s; see tests/test_slow_clients.sh for the scale).  The
# example sets no deadline on the answer, so it gets all of it; the
# control, at the same time, sets the fastcgi transport's read_timeout to
# 60 s divided by K: Caddy stops reading evfcgid when that deadline
# passes, however well the client reads, and the client gets what was
# already on its way (the kernel's autotuned send buffer towards it: Caddy
# has no knob to cap it), then a closed connection.
K=500 SIZE=4194304
pattern "$SIZE" >"$T/exp.slow"
declare -A GET
for rt in none $((60000 / K))ms; do
	v=""
	[ "$rt" = none ] || v=read_timeout=$rt
	if start_fe_more caddy "slow, read_timeout $rt" "$A" $v; then
		spawn "$HTTP_GET" -b 512 -p $((1000 / K)) -t 60 -o "$T/slow.$rt" "$URL/size?$SIZE" >"$T/get.$rt" 2>&1
		GET[$rt]=$SPAWNED
	fi
done
for rt in none $((60000 / K))ms; do
	[ -n "${GET[$rt]:-}" ] || continue
	wait "${GET[$rt]}"
	rc=$?
	echo "# read_timeout $rt: $(tail -n 1 "$T/get.$rt")"
	if [ "$rt" != none ]; then
		check "read_timeout $rt (control): the slow client is cut (rc $rc)" \
			eval '! same_file "$T/exp.slow" "$T/slow.$rt"'
	else
		check "the example: a client reading at most $((K * 512)) B/s gets all $SIZE bytes (rc $rc)" \
			same_file "$T/exp.slow" "$T/slow.$rt"
	fi
done

check "both evfcgid still running" kill -0 "$A_PID" "$EVFCGID_PID"
finish
