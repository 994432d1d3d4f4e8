#!/bin/bash
# evfcgid behind the real Apache httpd 2.4 (mod_proxy_fcgi), run from a
# copy of apache.conf.example (tests/frontends.sh): every route byte for
# byte, answers up to 8 MiB, HEAD then GET on one kept connection, 5 MiB
# uploads with Content-Length and chunked, a client reset mid-answer,
# backend connections reused (enablereuse=on), /status kept to this
# machine, and a slow client against the example's Timeout, scaled down
# (the real-speed run is tests/soak-frontends, in make soak), with its
# control: without the example's SendBufferSize that client is cut.
#
# That control is the kernel's doing: the send buffer towards the client
# autotunes from tcp_wmem's default, and how long Apache waits on it
# depends on where it starts (with a default of 1 MiB the client was not
# cut).  So it runs on the kernel's stock TCP buffers (tests/stock-tcp.sh).
source "$(dirname "$0")/stock-tcp.sh"
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }
[ -x "$APACHE" ] || { not_ok "apache2 is installed ($APACHE; make deps)"; finish; }

start_evfcgid --max-size 16m --max-body 8m
A=127.0.0.1:$EVFCGID_PORT A_PID=$EVFCGID_PID
if start_fe apache "example" "$A"; then
	check "apache: the generated copy keeps enablereuse=on and Timeout 900" \
		eval 'grep -q "^[[:space:]]*ProxyPass .* enablereuse=on" "$FE_DIR/apache.conf" &&
			grep -q "^Timeout 900$" "$FE_DIR/apache.conf"'
	http_route_checks "apache" "$URL" $((16 << 20)) $((8 << 20))
	fe_battery "apache" "$URL" "$A"

	# Kept backend connections: enablereuse=on.  Requests one at a time
	# may land on any thread of any child, each with its own connection.
	fe_backend_conns "$A" 30
	echo "# keepalive: 30 requests through apache opened $FE_CONNS backend connections"
	check "keepalive: 30 requests reached evfcgid (got $FE_REQS)" test "$FE_REQS" -eq 30
	check "keepalive: backend connections reused ($FE_CONNS new for 30 requests)" test "$FE_CONNS" -lt 30
	check_status_kept_local
	stop_fe
fi

# The control: without enablereuse every request is a connection.
if start_fe apache "noreuse" "$A" noreuse; then
	fe_backend_conns "$A" 10
	check "no enablereuse (control): 10 requests, 10 backend connections (got $FE_CONNS)" \
		test "$FE_CONNS" -eq 10
	stop_fe
fi

# --- Backpressure: a client reading 64 MiB at 64 KiB/s; two seconds later
# evfcgid is still producing it and holds about a watermark.
start_evfcgid
check_backpressure_behind apache "apache" "127.0.0.1:$EVFCGID_PORT"

# --- A slow client.  http_get reads 512 bytes every 1000/K ms (at most K
# times 512 B/s) against the example's Timeout divided by K (whole
# seconds, rounded down): the 512 B/s client against the real one (see
# tests/test_slow_clients.sh for the scale).  The control, at the same
# time: the same Timeout without the example's SendBufferSize; the kernel
# autotunes the send buffer towards the client, a third of it takes longer
# than Timeout to drain, and Apache cuts the client.
K=200
to=$(sed -n -E 's/^Timeout ([0-9]+)$/\1/p' "$APACHE_EXAMPLE")
check "the example's Timeout found ('$to')" test -n "$to"
to=$((${to:-900} / K))
control=("no SendBufferSize" "timeout=$to nosndbuf")
stock_tcp || {
	ok "# SKIP no SendBufferSize (control): here $TCP_BUFS, not the stock ones (as root the test makes a namespace with them)"
	control=()
}
check_slow_pair apache "$A" "$K" 2097152 100 "the example, Timeout scaled" "timeout=$to" "${control[@]}"

# The example's own way: evfcgid on a unix socket of this host.  Apache's
# children (www-data) connect to it: the directory is let through and the
# socket open to them, as the example's --socket-group www-data does.
chmod 0711 "$T"
usock=$T/evfcgid.sock
spawn "$EVFCGID" --listen "unix:$usock" --socket-mode 0666 2>"$T/unix.log"
U_PID=$SPAWNED
wait_port "unix:$usock"
if start_fe apache "unix socket" "unix:$usock"; then
	check "apache: the unix socket copy passes ProxyPass \"unix:...|fcgi://localhost/\"" \
		grep -q "ProxyPass \"/\" \"unix:$usock|fcgi://localhost/\" enablereuse=on" "$FE_DIR/apache.conf"
	pattern 1048576 >"$T/u.1m"
	http_check "apache over the unix socket: /size?1048576 byte for byte" "$URL/size?1048576" 200 "$T/u.1m"
	http_check "apache over the unix socket: /hello" "$URL/hello" 200
	stop_fe
fi

check "every evfcgid still running" kill -0 "$A_PID" "$EVFCGID_PID" "$U_PID"
finish
