#!/bin/bash
# evfcgid behind the real Apache httpd 2.4 (mod_proxy_fcgi), run from a
# copy of apache.conf.example (tests/frontends.sh): every route byte for
# byte, answers up to 8 MiB, HEAD then GET on one kept connection, 5 MiB
# uploads with Content-Length and chunked, a client reset mid-answer,
# backend connections reused (enablereuse=on), /status kept to this
# machine, and a slow client against the example's Timeout, scaled down
# (the real-speed run is tests/soak-frontends, in make soak), with its
# control: without the example's SendBufferSize that client is cut.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"
HTTP_GET=$TOP/tools/http_get

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }
[ -x "$APACHE" ] || { not_ok "apache2 is installed ($APACHE; make deps)"; finish; }

start_evfcgid --max-size 16m --max-body 8m
A=127.0.0.1:$EVFCGID_PORT A_PID=$EVFCGID_PID
if start_fe_more apache "example" "$A"; then
	check "apache: the generated copy keeps enablereuse=on and Timeout 900" \
		eval 'grep -q "^[[:space:]]*ProxyPass .* enablereuse=on" "$FE_DIR/apache.conf" &&
			grep -q "^Timeout 900$" "$FE_DIR/apache.conf"'
	http_route_checks "apache" "$URL" $((16 << 20)) $((8 << 20))
	fe_battery "apache" "$URL" "$A"

	# Kept backend connections: enablereuse=on.  Requests one at a time
	# may land on any thread of any child, each with its own connection.
	read -r c0 r0 <<<"$(status_of "$A" connections_total requests)"
	for i in $(seq 30); do curl -s -o /dev/null "$URL/hello"; done
	read -r c1 r1 <<<"$(status_of "$A" connections_total requests)"
	dc=$((c1 - c0 - 1))
	dr=$((r1 - r0 - 1))
	echo "# keepalive: 30 requests through apache opened $dc backend connections"
	check "keepalive: 30 requests reached evfcgid (got $dr)" test "$dr" -eq 30
	check "keepalive: backend connections reused ($dc new for 30 requests)" test "$dc" -lt 30

	code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/status")
	check "the example serves /status to this machine ($code)" test "$code" = 200
	code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$URL/status?format=prometheus")
	check "the example keeps /status from other clients (127.0.0.2: $code)" test "$code" = 403
	code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 "$URL/hello")
	check "... and serves them the rest (127.0.0.2 /hello: $code)" test "$code" = 200
	stop_fe
fi

# The control: without enablereuse every request is a connection.
if start_fe_more apache "noreuse" "$A" noreuse; then
	c0=$(status_of "$A" connections_total)
	for i in $(seq 10); do curl -s -o /dev/null "$URL/hello"; done
	c1=$(status_of "$A" connections_total)
	dc=$((c1 - c0 - 1))
	check "no enablereuse (control): 10 requests, 10 backend connections (got $dc)" test "$dc" -eq 10
	stop_fe
fi

# --- Backpressure: a client reading 64 MiB at 64 KiB/s; two seconds later
# evfcgid is still producing it and holds about a watermark.
start_evfcgid
B=127.0.0.1:$EVFCGID_PORT
if start_fe_more apache "backpressure" "$B"; then
	check_backpressure "apache" "$B"
	kill "$SLOW_PID" 2>/dev/null
	stop_fe
fi

# --- A slow client.  http_get reads 512 bytes every 1000/K ms (at most K
# times 512 B/s) against the example's Timeout divided by K (whole
# seconds, rounded down): the 512 B/s client against the real one (see
# tests/test_slow_clients.sh for the scale).  The control, at the same
# time: the same Timeout without the example's SendBufferSize; the kernel
# autotunes the send buffer towards the client, a third of it takes longer
# than Timeout to drain, and Apache cuts the client.
K=200 SIZE=2097152
pattern "$SIZE" >"$T/exp.slow"
to=$(sed -n -E 's/^Timeout ([0-9]+)$/\1/p' "$APACHE_EXAMPLE")
check "the example's Timeout found ('$to')" test -n "$to"
declare -A GET
for v in example nosndbuf; do
	x=""
	[ "$v" = nosndbuf ] && x=nosndbuf
	if start_fe_more apache "slow, $v" "$A" timeout=$((${to:-900} / K)) $x; then
		spawn "$HTTP_GET" -b 512 -p $((1000 / K)) -t 100 -o "$T/slow.$v" "$URL/size?$SIZE" >"$T/get.$v" 2>&1
		GET[$v]=$SPAWNED
	fi
done
for v in example nosndbuf; do
	[ -n "${GET[$v]:-}" ] || continue
	wait "${GET[$v]}"
	rc=$?
	echo "# Timeout $((${to:-900} / K)) s, $v: $(tail -n 1 "$T/get.$v")"
	if [ "$v" = nosndbuf ]; then
		check "no SendBufferSize (control): the slow client is cut (rc $rc)" \
			eval '! same_file "$T/exp.slow" "$T/slow.$v"'
	else
		check "the example, Timeout scaled: a client reading at most $((K * 512)) B/s gets all $SIZE bytes (rc $rc)" \
			same_file "$T/exp.slow" "$T/slow.$v"
	fi
done

check "both evfcgid still running" kill -0 "$A_PID" "$EVFCGID_PID"
finish
