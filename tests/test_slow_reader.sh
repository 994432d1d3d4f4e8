#!/bin/bash
# check: alone (it measures /hello's rate beside a slow reader)
# A slow reader at the FastCGI level: one connection reads a 64 MiB /size a
# small read at a time while ten other connections make 1000 /hello
# requests.  The fast requests all finish while the slow one is still
# reading, the daemon holds about a watermark for the slow reader, and its
# RSS stays under 32 MiB.  The speed ratio is printed here and asserted by
# `make bench` (tests/bench-slow-reader), side by side in one run.
# Then the steady state: once warm, serving large responses by reference
# touches no new memory (minor page faults per request stay near 0).  And
# --sndbuf: the kernel's send buffer towards a slow reader stays at 128 KiB
# by default (64k, doubled by the kernel); --sndbuf 0 lets it autotune to
# megabytes; on a unix socket it is a quarter of --sndbuf.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
FCGI_LOAD=$TOP/tools/fcgi_load

start_evfcgid
addr=127.0.0.1:$EVFCGID_PORT

# hello_rps: requests/s of 1000 /hello over 10 kept connections.
hello_rps() {
	"$FCGI_LOAD" -c 10 -k -n 1000 "$addr" /hello >"$T/fast.out" 2>&1 ||
		{ echo "# fcgi_load failed:" >&2; sed 's/^/# /' "$T/fast.out" >&2; }
	sed -n -E 's/^rps: ([0-9.]+).*/\1/p' "$T/fast.out"
}

base=$(hello_rps)
check "baseline: 1000 /hello answered" grep -q '^requests: 1000$' "$T/fast.out"

spawn "$FCGI_LOAD" -c 1 -n 1 --rcvbuf 4096 --read-size 512 --pause 5 \
	--timeout 60 "$addr" "/size?67108864"
slow=$SPAWNED
sleep 1
loaded=$(hello_rps)
check "with a slow reader: 1000 /hello answered" grep -q '^requests: 1000$' "$T/fast.out"
check "the slow reader is still reading (it has not stalled the others)" kill -0 "$slow"

read -r stalled queued high <<<"$(status_of "$addr" stalled_sockets bytes_queued high_water)"
rss=$(rss_kib "$EVFCGID_PID")
echo "# /hello: $base req/s alone, $loaded req/s beside a 64 MiB slow reader," \
	"ratio $(ratio "$loaded" "$base")"
echo "# daemon: RSS $rss KiB, $queued bytes queued, $stalled stalled socket(s), high water $high"
check "the slow reader's socket waits above the low watermark (stalled: $stalled)" test "$stalled" -eq 1
check "queued for it: at most a watermark and one record ($queued bytes)" \
	test "$queued" -le $((high + 65536 + 64))
check "daemon RSS under 32 MiB while a 64 MiB response is read ($rss KiB)" test "$rss" -lt 32768

kill "$slow"
wait "$slow" 2>/dev/null
sleep 0.3
check "the slow reader gone: nothing left queued" test "$(status_of "$addr" bytes_queued)" -eq 0

# minflt PID: minor page faults so far (field 10 of /proc/PID/stat).
minflt() { awk '{ print $10 }' "/proc/$1/stat"; }
# Each STDOUT record is a header, a slice of the shared body by reference
# and padding.  Appended with a plain evbuffer_add, each header got a chain
# as large as the slice before it (64 KiB for 8 bytes); glibc gave that
# back at the top of the heap after every request and faulted it in again,
# about 0.5 faults per /big and a third slower.  Warm up, then count.
for uri in /big "/size?8388608"; do
	n=2000
	[ "$uri" = /big ] || n=200
	"$FCGI_LOAD" -c 10 -n 200 "$addr" "$uri" >/dev/null 2>&1
	f0=$(minflt "$EVFCGID_PID")
	"$FCGI_LOAD" -c 10 -n "$n" "$addr" "$uri" >"$T/steady.out" 2>&1
	f=$(( $(minflt "$EVFCGID_PID") - f0 ))
	echo "# $n x $uri, warm: $f minor page faults in the daemon"
	check "$n x $uri answered" grep -q "^requests: $n\$" "$T/steady.out"
	check "$n x $uri, warm: under one minor page fault per 20 requests ($f)" \
		test "$f" -lt $((n / 20))
done

default_port=$EVFCGID_PORT
start_evfcgid --sndbuf 0
auto=127.0.0.1:$EVFCGID_PORT
check "--sndbuf 0: /status reports it" test "$(status_of "$auto" sndbuf)" = 0
check "by default: /status reports sndbuf 65536" \
	test "$(status_of "127.0.0.1:$default_port" sndbuf)" = 65536
"$FCGI_LOAD" -c 4 -n 20 "127.0.0.1:$default_port" "/size?1048579" >"$T/capped.out" 2>&1
"$FCGI_LOAD" -c 4 -n 20 "$auto" "/size?1048579" >"$T/auto.out" 2>&1
# bytes: what both daemons sent, CGI headers and bodies.
bytes_of() { sed -n 's/^bytes: //p' "$1"; }
check "by default (64k): 20 x 1 MiB answered, as many bytes as with --sndbuf 0 ($(bytes_of "$T/capped.out"))" \
	eval 'grep -q "^requests: 20$" "$T/capped.out" && grep -q "^status 200: 20$" "$T/capped.out" &&
		test "$(bytes_of "$T/capped.out")" -gt $((20 * 1048579)) &&
		test "$(bytes_of "$T/capped.out")" = "$(bytes_of "$T/auto.out")"'
readers=()
for port in "$default_port" "$EVFCGID_PORT"; do
	spawn "$FCGI_LOAD" -c 1 -n 1 --rcvbuf 512 --read-size 512 --pause 200 \
		--timeout 30 "127.0.0.1:$port" "/size?8388608"
	readers+=("$SPAWNED")
done
sleep 3
tb_default=$(sndbuf_of "$default_port")
tb_auto=$(sndbuf_of "$EVFCGID_PORT")
echo "# kernel send buffer towards a slow reader: $tb_default bytes by default," \
	"$tb_auto with --sndbuf 0 (tcp_wmem: $(cat /proc/sys/net/ipv4/tcp_wmem))"
check "by default the slow reader's send buffer is 128 KiB ($tb_default)" \
	test "${tb_default:-0}" -eq 131072
check "with --sndbuf 0 (autotuned) it grew beyond that ($tb_auto)" test "${tb_auto:-0}" -gt 131072
kill "${readers[@]}" 2>/dev/null

# On a unix socket (nginx.conf.example's upstream) nothing waits for an
# acknowledgement: the send buffer holds what the front end has not read,
# and evfcgid sets a quarter of --sndbuf there (16k, doubled: 32 KiB).
sock=$T/evfcgid.sock
spawn "$EVFCGID" --listen "unix:$sock" 2>"$T/evfcgid.unix.log"
wait_until 5 test -S "$sock"
spawn "$FCGI_LOAD" -c 1 -n 1 --rcvbuf 512 --read-size 512 --pause 200 \
	--timeout 30 "unix:$sock" "/size?8388608"
reader=$SPAWNED
# The send buffer of evfcgid's end, the one ss names by the path.
wait_until 5 eval 'test -n "$(unix_sndbufs "$sock")"'
tb_unix=$(unix_sndbufs "$sock" | head -n 1)
echo "# unix socket: evfcgid's send buffer towards a slow reader is $tb_unix bytes"
check "on a unix socket the send buffer is a quarter of --sndbuf, doubled: 32 KiB ($tb_unix)" \
	test "${tb_unix:-0}" -eq 32768
kill "$reader" 2>/dev/null
finish
