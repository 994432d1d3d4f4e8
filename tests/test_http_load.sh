#!/bin/bash
# tests/test_http_load.sh: tools/http_load against a real nginx serving
# static files on a loopback port: counts, bytes, codes, -seconds, -rate,
# throttling, checksums, failures.  Nothing here is a rate held against
# another: tests/test_http_load_rate.sh does that, alone on the machine.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

HTTP_LOAD=$TOP/tools/http_load
HTTP_GET=$TOP/tools/http_get

for need in "$HTTP_LOAD" "$HTTP_GET" "$NGINX" "$TOP/tests/bin/freeport"; do
	if [ ! -x "$need" ]; then
		not_ok "$need is missing (make tools/http_load tools/http_get tests/bin/freeport)"
		finish
	fi
done


mkdir -p "$T/www"
printf 'Hello World\n' >"$T/www/small"		# 12 bytes
pattern 96256 >"$T/www/big"			# 94 KiB
head -c 1048576 /dev/urandom >"$T/www/1m"	# 1 MiB
head -c 10240 /dev/urandom >"$T/www/10k"	# 10 KiB
head -c 1200 /dev/urandom >"$T/www/1200"	# within one read of -throttle
head -c 65536 /dev/urandom >"$T/www/64k"	# within one read of -Throttle 1600000
# nginx serves $T/www on 127.0.0.1:$PORT, with room for thousands of
# connections; /chunked/ serves the same files in chunked coding;
# /varying answers a fixed-length body that differs every time; /sleep
# goes to evfcgid; /small logs each request's status and end time to
# $T/nginx/small.log, /who each client's address to $T/nginx/who.log.
# 127.0.0.1:$PROXY_PORT is an HTTP proxy to that server that logs each
# request line to $T/nginx/proxy.log.
read -r PORT PROXY_PORT < <(freeport 2 | xargs)
if ! start_evfcgid ||
    ! nginx_static_conf "$T/nginx" "$PORT" "$T/www" many small_log varying \
	who_log "fastcgi=127.0.0.1:$EVFCGID_PORT" "proxy=$PROXY_PORT" ||
    ! start_nginx "$T/nginx" || ! wait_port "$PROXY_PORT"; then
	not_ok "evfcgid and nginx start"
	cat "$T/nginx/error.log" >&2
	finish
fi
BASE=http://127.0.0.1:$PORT
urls "$T/u.small" "$BASE/small"
urls "$T/u.big" "$BASE/big"
urls "$T/u.1m" "$BASE/1m"
urls "$T/u.10k" "$BASE/10k"
urls "$T/u.1200" "$BASE/1200"
urls "$T/u.64k" "$BASE/64k"
urls "$T/u.chunked" "$BASE/chunked/big"
urls "$T/u.mix" "$BASE/small" "$BASE/no-such-file"
SIZE404=$("$HTTP_GET" --pause 0 "$BASE/no-such-file" 2>/dev/null | tr ' ' '\n' | sed -n 's/^body=//p')

# --- command line ---
out=$("$HTTP_LOAD" --help)
check "--help exits 0 with the usage" grep -q -- '-parallel N | -rate N' <<<"$out"
for args in "" "-parallel 1 $T/u.small" "-fetches 1 $T/u.small" \
	"-parallel 1 -fetches 1" "-bogus -parallel 1 -fetches 1 $T/u.small" \
	"-parallel 0 -fetches 1 $T/u.small" "-parallel x -fetches 1 $T/u.small" \
	"-parallel 1 -rate 1 -fetches 1 $T/u.small" \
	"-parallel 1 -jitter -fetches 1 $T/u.small" \
	"-parallel 1 -fetches 1 -seconds 1 $T/u.small" \
	"-parallel 1 -fetches 1 $T/no-such-url-file"; do
	# shellcheck disable=SC2086
	"$HTTP_LOAD" $args >/dev/null 2>&1
	check "exit 1 for: http_load ${args//$T\//}" test $? -eq 1
done
urls "$T/u.bad" "$BASE/small" "ftp://127.0.0.1/x"
http_load -parallel 1 -fetches 1 "$T/u.bad"
check "bad URL in the file: exit 1, names the line" \
	eval 'test $RC -eq 1 && grep -q "u.bad:2" <<<"$ERR"'
urls "$T/u.badport" "http://127.0.0.1:70000/"
http_load -parallel 1 -fetches 1 "$T/u.badport"
check "bad port in the file: exit 1" test "$RC" -eq 1

# --- counts, bytes, codes ---
http_load -parallel 10 -fetches 1000 "$T/u.small"
check "-fetches 1000: exactly 1000 fetches, exit 0" test "$(fetches) $RC" = "1000 0"
check "-fetches 1000: code 200 -- 1000" test "$(code 200)" = 1000
check "-fetches 1000: 12000 bytes, 12 mean bytes/connection" \
	eval 'test "$(bytes)" = 12000 && grep -q "^12 mean bytes/connection$" <<<"$OUT"'
check "-parallel 10: 10 max parallel" test "$(maxpar)" = 10
check "summary has the original's lines" eval '
	grep -Eq "^[0-9]+ fetches, [0-9]+ max parallel, [0-9.e+]+ bytes, in [0-9.e+-]+ seconds$" <<<"$OUT" &&
	grep -Eq "^[0-9.e+]+ fetches/sec, [0-9.e+]+ bytes/sec$" <<<"$OUT" &&
	grep -Eq "^msecs/connect: [0-9.e+-]+ mean, [0-9.e+-]+ max, [0-9.e+-]+ min$" <<<"$OUT" &&
	grep -Eq "^msecs/first-response: [0-9.e+-]+ mean, [0-9.e+-]+ max, [0-9.e+-]+ min$" <<<"$OUT" &&
	grep -q "^HTTP response codes:$" <<<"$OUT"'
check "no timeouts or bad byte counts lines when there are none" \
	eval '! grep -Eq "timeouts|bad byte|connect failures" <<<"$OUT"'

http_load -keepalive -parallel 10 -fetches 500 "$T/u.small"
check "-keepalive -fetches 500: exactly 500 fetches, code 200 -- 500" \
	test "$(fetches) $(code 200) $(bytes)" = "500 500 6000"
http_load --keepalive -parallel 3 -fetches 7 "$T/u.small"
check "--keepalive (long form) accepted" test "$(fetches) $RC" = "7 0"

http_load -p 5 -f 400 "$T/u.mix"
n200=$(code 200)
n404=$(code 404)
echo "# mix: $n200 x 200, $n404 x 404 (404 body $SIZE404 bytes)"
check "200/404 mix: the code table adds up to 400, both present" \
	test "$((n200 + n404))" = 400 -a "$n200" -gt 0 -a "$n404" -gt 0
check "200/404 mix: only codes 200 and 404 listed" \
	test "$(grep -c '^  code ' <<<"$OUT")" = 2
check "200/404 mix: bytes = 12 x n200 + $SIZE404 x n404" \
	test "$(bytes)" = "$(g $((12 * n200 + SIZE404 * n404)))"
check "abbreviated flags -p -f work as in the original" test "$(fetches)" = 400

http_load -parallel 5 -fetches 5 "$T/u.big"
check "94 KiB x 5: 481280 bytes, 96256 mean" \
	eval 'test "$(bytes)" = 481280 && grep -q "^96256 mean bytes/connection$" <<<"$OUT"'
http_load -parallel 4 -fetches 8 "$T/u.1m"
check "1 MiB x 8: $(g $((8 * 1048576))) bytes, no bad byte counts" \
	eval 'test "$(bytes)" = "$(g $((8 * 1048576)))" && ! grep -q bad <<<"$OUT"'
http_load -parallel 4 -fetches 20 "$T/u.chunked"
check "chunked 94 KiB x 20: decoded bytes $(g $((20 * 96256))), no bad counts" \
	eval 'test "$(fetches) $(bytes)" = "20 $(g $((20 * 96256)))" && ! grep -q bad <<<"$OUT"'
http_load -keepalive -parallel 4 -fetches 20 "$T/u.chunked"
check "chunked with -keepalive: decoded bytes $(g $((20 * 96256)))" \
	eval 'test "$(fetches) $(bytes)" = "20 $(g $((20 * 96256)))" && ! grep -q bad <<<"$OUT"'

# Thousands of sockets at once, as far as the descriptor limit allows.
P=1000
lim=$(ulimit -Hn)
[ "$lim" != unlimited ] && [ $((lim / 3)) -lt $P ] && P=$((lim / 3))
http_load -parallel $P -fetches $((3 * P)) "$T/u.small"
check "-parallel $P: $((3 * P)) fetches, $P max parallel, all 200" \
	test "$(fetches) $(maxpar) $(code 200)" = "$((3 * P)) $P $((3 * P))"
http_load -keepalive -parallel $P -fetches $((5 * P)) "$T/u.small"
check "-keepalive -parallel $P: $((5 * P)) fetches, $P max parallel, all 200" \
	test "$(fetches) $(maxpar) $(code 200)" = "$((5 * P)) $P $((5 * P))"

# --- checksums ---
urls "$T/u.varying" "$BASE/varying"
http_load -parallel 1 -fetches 10 "$T/u.varying"
check "varying body of fixed length: no bad byte counts" \
	eval 'test "$(fetches)" = 10 && ! grep -q bad <<<"$OUT"'
http_load -checksum -parallel 1 -fetches 10 "$T/u.varying"
check "-checksum: varying body gives 9 bad checksums" \
	test "$(line_count 'bad checksums')" = 9
http_load -checksum -parallel 3 -fetches 30 "$T/u.1m"
check "-checksum: identical 1 MiB bodies give no bad checksums" \
	eval 'test "$(fetches)" = 30 && ! grep -q bad <<<"$OUT"'

# --- time: -seconds, -rate, throttling ---
t0=$(now_ns)
http_load -parallel 5 -seconds 2 "$T/u.small"
wall=$(ms_since "$t0")
echo "# -seconds 2: $(fetches) fetches in $(seconds) s, wall $wall ms"
check "-seconds 2: stops by itself at 2 s" \
	awk -v s="$(seconds)" -v w="$wall" 'BEGIN { exit !(s >= 1.99 && s < 2.2 && w < 3000) }'
check "-seconds 2: fetches made" test "$(fetches)" -gt 100
t0=$(now_ns)
http_load -Throttle 1000000 -parallel 3 -seconds 1.5 "$T/u.1m"
wall=$(ms_since "$t0")
# Its own clock says 1.5 s; the wall (process start and end on a loaded
# machine included) only has to show it did not wait for the 10 s fetches.
check "-seconds with 10 s fetches in flight: stops at 1.5 s, abandoned fetches not counted ($(fetches) fetches, $(maxpar) parallel, $(seconds) s, wall $wall ms)" \
	awk -v f="$(fetches)" -v p="$(maxpar)" -v s="$(seconds)" -v w="$wall" \
	'BEGIN { exit !(f == 0 && p == 3 && s >= 1.49 && s < 1.7 && w < 5000) }'

http_load -rate 50 -seconds 2 "$T/u.small"
echo "# -rate 50 -seconds 2: $(fetches) fetches, $(rate) fetches/sec"
check "-rate 50 for 2 s: 95..101 fetches" test "$(fetches)" -ge 95 -a "$(fetches)" -le 101
http_load -rate 100 -jitter -keepalive -seconds 1 "$T/u.small"
check "-rate 100 -jitter -keepalive for 1 s: 90..110 fetches" \
	test "$(fetches)" -ge 90 -a "$(fetches)" -le 110
t0=$(now_ns)
http_load -rate 100 -fetches 50 "$T/u.small"
wall=$(ms_since "$t0")
check "-rate 100 -fetches 50: exactly 50 fetches in about 0.5 s ($wall ms)" \
	test "$(fetches)" = 50 -a "$wall" -ge 450 -a "$wall" -lt 1500

# -Throttle N is in bits/s as in the original: N / 10 bytes/s, a byte on
# a serial line being 10 bits with its start and stop bits.
t0=$(now_ns)
http_load -Throttle 5000000 -parallel 2 -fetches 2 "$T/u.1m"
wall=$(ms_since "$t0")
echo "# -Throttle 5000000 on 1 MiB: $wall ms"
check "-Throttle 5000000 (bits/s, 500000 bytes/s): 1 MiB takes 1.5..3.5 s, bytes intact" \
	test "$wall" -ge 1500 -a "$wall" -lt 3500 -a "$(bytes)" = "$(g $((2 * 1048576)))"
t0=$(now_ns)
http_load -Throttle 33600 -parallel 2 -fetches 2 "$T/u.10k"
wall=$(ms_since "$t0")
per=$(per_conn 2)
echo "# -Throttle 33600 on 10 KiB: $wall ms, $per bytes/s per connection"
check "-Throttle 33600 (3360 bytes/s): a 10 KiB answer takes about 3 s ($wall ms), bytes intact" \
	test "$wall" -ge 2700 -a "$wall" -lt 4500 -a "$(fetches) $(bytes)" = "2 20480"
check "-Throttle 33600: 2856..3528 body bytes/s per connection ($per)" \
	test "$per" -ge 2856 -a "$per" -le 3528
# The rate holds from the first byte: an answer that one read could take
# whole (reads go up to half a second's worth) still takes its time.
t0=$(now_ns)
http_load -throttle -parallel 2 -fetches 2 "$T/u.1200"
wall=$(ms_since "$t0")
echo "# -throttle on a 1200-byte answer: $wall ms, first response $(first_ms) ms"
check "-throttle (3360 bytes/s): a 1200-byte answer takes 0.4..1.5 s ($wall ms), bytes intact" \
	test "$wall" -ge 400 -a "$wall" -lt 1500 -a "$(fetches) $(bytes)" = "2 2400"
check "-throttle: msecs/first-response is the server's, not the pause's ($(first_ms) ms)" \
	test "$(first_ms)" -lt 50
t0=$(now_ns)
http_load -Throttle 1600000 -parallel 2 -fetches 2 "$T/u.64k"
wall=$(ms_since "$t0")
per=$(per_conn 2)
echo "# -Throttle 1600000 on 64 KiB: $wall ms, $per bytes/s per connection"
check "-Throttle 1600000 (160000 bytes/s): 64 KiB takes 0.4..1.2 s ($wall ms), at most 168000 bytes/s per connection ($per)" \
	test "$wall" -ge 400 -a "$wall" -lt 1200 -a "$per" -le 168000 -a "$(bytes)" = "$(g $((2 * 65536)))"
t0=$(now_ns)
http_load -throttle -keepalive -parallel 1 -fetches 2 "$T/u.1200"
wall=$(ms_since "$t0")
check "-throttle -keepalive: each fetch on the kept connection paced, 2 x 1200 bytes take 0.8..2.5 s ($wall ms)" \
	test "$wall" -ge 800 -a "$wall" -lt 2500 -a "$(fetches) $(bytes)" = "2 2400"
t0=$(now_ns)
http_load -throttle -parallel 2 -fetches 2 "$T/u.small"
check "-throttle (modem) on a small file: quick and complete" \
	test "$(fetches) $(code 200)" = "2 2" -a "$(ms_since "$t0")" -lt 1500
http_load -verbose -parallel 2 -fetches 20 "$T/u.small"
check "-verbose runs" test "$(fetches) $RC" = "20 0"

# --- -proxy: every request to one proxy, the absolute URL its target ---
# The URL's host does not resolve: only the proxy (nginx, passing the
# request on to the file server) can answer it.
urls "$T/u.viaproxy" "http://origin.invalid:$PORT/small"
http_load -parallel 1 -fetches 1 "$T/u.viaproxy"
check "a URL whose host does not resolve: exit 1 without -proxy" test "$RC" -eq 1
: >"$T/nginx/proxy.log"
http_load -proxy "127.0.0.1:$PROXY_PORT" -parallel 2 -fetches 4 "$T/u.viaproxy"
check "-proxy HOST:PORT (nginx): 4 fetches through the proxy, 48 bytes, all 200" \
	test "$(fetches) $(bytes) $(code 200) $RC" = "4 48 4 0"
n=$(logged 4 "$T/nginx/proxy.log" "GET http://origin.invalid:$PORT/small HTTP/1.1")
check "-proxy: the proxy got 4 requests for the absolute URL ($n)" test "$n" = 4
: >"$T/nginx/proxy.log"
http_load -keepalive -proxy "127.0.0.1:$PROXY_PORT" -parallel 2 -fetches 10 "$T/u.viaproxy"
n=$(logged 10 "$T/nginx/proxy.log" "GET http://origin.invalid:$PORT/small HTTP/1.1")
check "-proxy with -keepalive: 10 fetches, all 200, 10 absolute URLs at the proxy ($n)" \
	test "$(fetches) $(code 200) $n" = "10 10 10"
for v in "" "127.0.0.1:" "127.0.0.1:0" "127.0.0.1:70000" "127.0.0.1:x" "::1" \
	"[::1" "unix:$T/sock" "no-such-host.invalid"; do
	http_load -proxy "$v" -parallel 1 -fetches 1 "$T/u.small"
	check "-proxy '${v//$T\//}': exit 2, says why" \
		eval 'test "$RC" = 2 && grep -q "bad value for -proxy" <<<"$ERR"'
done

# --- -sip: each connection dialled from the next source address ---
# All of 127.0.0.0/8 is this host's on Linux; nginx logs whom it saw.
urls "$T/u.who" "$BASE/who"
printf '# three sources\n127.0.0.1\n\n127.0.0.2\n127.0.0.3\n' >"$T/sips"
: >"$T/nginx/who.log"
http_load -sip "$T/sips" -parallel 3 -fetches 9 "$T/u.who"
seen=$(for a in 127.0.0.1 127.0.0.2 127.0.0.3; do logged 3 "$T/nginx/who.log" $a; done | xargs)
check "-sip 127.0.0.1..3: 9 fetches, all 200, nginx saw each source 3 times ($seen)" \
	test "$(fetches) $(code 200) $RC $seen" = "9 9 0 3 3 3"
: >"$T/nginx/who.log"
http_load -sip "$T/sips" -keepalive -parallel 3 -fetches 30 "$T/u.who"
logged 30 "$T/nginx/who.log" >/dev/null
seen=$(for a in 127.0.0.1 127.0.0.2 127.0.0.3; do logged 1 "$T/nginx/who.log" $a; done | xargs)
check "-sip with -keepalive: 30 fetches on 3 connections, one from each source ($seen)" \
	eval 'test "$(fetches) $(code 200)" = "30 30" && test $(( ${seen// /+} )) = 30 && ! grep -qw 0 <<<"$seen"'
: >"$T/nginx/proxy.log"
http_load -sip "$T/sips" -proxy "127.0.0.1:$PROXY_PORT" -parallel 2 -fetches 4 "$T/u.viaproxy"
check "-sip with -proxy: 4 fetches through the proxy, all 200" \
	test "$(fetches) $(code 200)" = "4 4"
printf '127.0.0.1\n127.0.0.300\n' >"$T/sips.bad"
printf '192.0.2.1\n' >"$T/sips.far"
printf '::1\n' >"$T/sips.v6"
printf '# none\n' >"$T/sips.empty"
for f in sips.none sips.bad sips.far sips.v6 sips.empty; do
	http_load -sip "$T/$f" -parallel 1 -fetches 1 "$T/u.small"
	check "-sip $f: exit 2, says why" \
		eval 'test "$RC" = 2 && grep -q -- "-sip .*$f" <<<"$ERR"'
done

# --- failures ---
DEAD=$(freeport)
urls "$T/u.dead" "http://127.0.0.1:$DEAD/"
http_load -parallel 2 -fetches 10 "$T/u.dead"
check "refused port: 10 fetches, 10 connect failures, exit 0" \
	test "$(fetches) $(line_count 'connect failures') $RC" = "10 10 0"
check "refused port: errors on stderr" grep -q 'refused' <<<"$ERR"
# The fake HTTP server of tests/http.sh: "silent" accepts and never
# answers; "dribble" reads a request, sends a chunked "hello world"
# (extension, trailer) one byte every 2 ms, and closes.
start_fake_http SILENT silent
start_fake_http DRIBBLE dribble
urls "$T/u.dribble" "http://127.0.0.1:$DRIBBLE/"
http_load -checksum -parallel 2 -fetches 4 "$T/u.dribble"
check "chunked response dribbled a byte at a time: 4 fetches, 44 bytes, no bad checksums" \
	eval 'test "$(fetches) $(bytes) $(code 200)" = "4 44 4" && ! grep -q bad <<<"$OUT"'
http_load -keepalive -parallel 1 -fetches 3 "$T/u.dribble"
check "-keepalive on a server that closes after each response: redials, 3 fetches, 33 bytes" \
	test "$(fetches) $(bytes) $(code 200)" = "3 33 3"
urls "$T/u.silent" "http://127.0.0.1:$SILENT/"
t0=$(now_ns)
http_load -timeout 1 -parallel 2 -fetches 2 "$T/u.silent"
wall=$(ms_since "$t0")
check "server that never answers: -timeout 1 gives 2 timeouts in ~1 s ($wall ms)" \
	test "$(fetches) $(line_count timeouts)" = "2 2" -a "$wall" -lt 3000

finish
