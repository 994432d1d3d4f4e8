#!/bin/bash
# check: alone (it times throttled downloads)
# tests/test_http_get.sh: tools/http_get, the throttled slow client, against
# a real nginx serving static files from a temp dir on a loopback port.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

HTTP_GET=$TOP/tools/http_get

for need in "$HTTP_GET" "$NGINX" "$TOP/tests/bin/freeport"; do
	if [ ! -x "$need" ]; then
		not_ok "$need is missing (make tools/http_get tests/bin/freeport)"
		finish
	fi
done

# kv KEY LINE: the value of KEY in a key=value summary line.
kv() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

printf 'Hello World\n' >"$T/small"		# 12 bytes
mkdir -p "$T/www"
cp "$T/small" "$T/www/small"
pattern 96256 >"$T/www/big"			# 94 KiB
head -c 1048576 /dev/urandom >"$T/www/1m"	# 1 MiB, every byte value
# nginx serves $T/www on 127.0.0.1:$PORT (and [::1]:$PORT when the host
# has IPv6 loopback); /chunked/ serves the same files in chunked coding.
PORT=$(freeport)
if ! nginx_static_conf "$T/nginx" "$PORT" "$T/www" v6 who_log || ! start_nginx "$T/nginx"; then
	not_ok "nginx starts"
	cat "$T/nginx/error.log" >&2
	finish
fi
BASE=http://127.0.0.1:$PORT

# --- command line ---
out=$("$HTTP_GET" --help)
check "--help exits 0 and documents the summary" \
	grep -q 'duration_ms' <<<"$out"
"$HTTP_GET" --no-such-flag "$BASE/small" >/dev/null 2>&1
check "unknown flag exits non-zero" test $? -ne 0
"$HTTP_GET" --read-size 0 "$BASE/small" >/dev/null 2>&1
check "--read-size 0 exits non-zero" test $? -ne 0
"$HTTP_GET" --pause abc "$BASE/small" >/dev/null 2>&1
check "non-numeric --pause exits non-zero" test $? -ne 0
"$HTTP_GET" --time-limit -1 "$BASE/small" >/dev/null 2>&1
check "negative --time-limit exits non-zero" test $? -ne 0
"$HTTP_GET" >/dev/null 2>&1
check "missing URL exits non-zero" test $? -ne 0
for bad in "ftp://127.0.0.1/x" "http://" "http://127.0.0.1:99999/" \
	"http://127.0.0.1:8x/" "http://[::1/" "not a url"; do
	"$HTTP_GET" "$bad" >/dev/null 2>&1
	check "bad URL '$bad' exits non-zero" test $? -ne 0
done

# --- bodies byte for byte ---
for f in small big 1m; do
	line=$("$HTTP_GET" --pause 0 --read-size 65536 --output "$T/out.$f" "$BASE/$f")
	rc=$?
	check "$f: exit 0" test "$rc" -eq 0
	check "$f: body byte-for-byte equal" same_file "$T/www/$f" "$T/out.$f"
	check "$f: summary status=200 body=$(stat -c %s "$T/www/$f") result=ok" \
		test "$(kv status "$line") $(kv body "$line") $(kv result "$line")" = \
		"200 $(stat -c %s "$T/www/$f") ok"
done
line=$("$HTTP_GET" --pause 0 --read-size 1000 --output "$T/out.chunked" "$BASE/chunked/big")
check "chunked body decoded byte-for-byte" same_file "$T/www/big" "$T/out.chunked"
check "chunked: body=96256 and more bytes than body on the wire" \
	test "$(kv body "$line")" = 96256 -a "$(kv bytes "$line")" -gt 96256
line=$("$HTTP_GET" --pause 0 --read-size 7 --output "$T/out.small7" "$BASE/small")
check "tiny reads (7 bytes) still parse the head and body" \
	same_file "$T/small" "$T/out.small7"
if have_ipv6_loopback; then
	line=$("$HTTP_GET" --pause 0 --output "$T/out.v6" "http://[::1]:$PORT/small")
	check "[IPv6] literal host" same_file "$T/small" "$T/out.v6"
else
	echo "# no IPv6 loopback here: [::1] not tested"
fi
line=$("$HTTP_GET" --pause 0 --output "$T/out.name" "http://localhost:$PORT/small")
check "host name (localhost)" same_file "$T/small" "$T/out.name"

# --- receive buffer ---
line=$("$HTTP_GET" --pause 0 --rcvbuf 512 "$BASE/small")
rb=$(kv rcvbuf "$line")
echo "# --rcvbuf 512 -> effective $rb"
check "--rcvbuf 512 reports the kernel's doubled value, floor 2304" \
	test "$rb" -eq $((512 * 2 > 2304 ? 512 * 2 : 2304)) -a "$rb" -ge 2304
line=$("$HTTP_GET" --pause 0 --rcvbuf 8192 "$BASE/small")
check "--rcvbuf 8192 reports 16384 (doubled)" test "$(kv rcvbuf "$line")" -eq 16384

# --- throttling: 1 MiB in reads of at most 512 bytes, 1 ms apart ---
start=$(now_ns)
line=$("$HTTP_GET" --rcvbuf 512 --read-size 512 --pause 1 --output "$T/out.slow" "$BASE/1m")
rc=$?
wall=$(ms_since "$start")
dur=$(kv duration_ms "$line")
dur=${dur%.*}
echo "# throttled 1 MiB: duration_ms=$dur wall_ms=$wall ($line)"
check "throttled 1 MiB: exit 0, body intact" \
	eval 'test $rc -eq 0 && same_file "$T/www/1m" "$T/out.slow"'
# At most 512 bytes a read means at least 2048 reads, each followed by 1 ms.
check "throttled 1 MiB takes >= 2.048 s (2048 reads x 1 ms) and < 30 s" \
	test "$dur" -ge 2048 -a "$dur" -lt 30000 -a "$wall" -ge 2048
line=$("$HTTP_GET" --rcvbuf 0 --read-size 65536 --pause 0 "$BASE/1m")
dur=$(kv duration_ms "$line")
echo "# unthrottled 1 MiB: duration_ms=$dur"
check "unthrottled 1 MiB takes < 1 s" test "${dur%.*}" -lt 1000

# --- failures ---
line=$("$HTTP_GET" --pause 0 "$BASE/no-such-file" 2>/dev/null)
rc=$?
check "404: non-zero exit, status=404 reported" \
	test "$rc" -ne 0 -a "$(kv status "$line")" = 404
DEAD=$(freeport)
line=$("$HTTP_GET" --pause 0 "http://127.0.0.1:$DEAD/" 2>/dev/null)
rc=$?
check "refused port: non-zero exit, result=connect_error" \
	test "$rc" -ne 0 -a "$(kv result "$line")" = connect_error
start=$(now_ns)
line=$("$HTTP_GET" --time-limit 1 --pause 1000 "$BASE/1m" 2>/dev/null)
rc=$?
wall=$(ms_since "$start")
echo "# --time-limit 1 on a half-hour read: exit $rc after $wall ms ($line)"
check "--time-limit exceeded: non-zero exit, result=timeout" \
	test "$rc" -ne 0 -a "$(kv result "$line")" = timeout
check "--time-limit 1 gives up within 1..3 s" test "$wall" -ge 990 -a "$wall" -lt 3000

# The fake HTTP server of tests/http.sh: silent, short and dribble.
start_fake_http SILENT silent
start_fake_http SHORT short
start_fake_http DRIBBLE dribble
line=$("$HTTP_GET" --pause 0 --output "$T/out.dribble" "http://127.0.0.1:$DRIBBLE/")
check "chunked response dribbled a byte at a time: 'hello world', status 200" \
	test "$(cat "$T/out.dribble") $(kv status "$line") $(kv result "$line")" = "hello world 200 ok"
line=$("$HTTP_GET" --pause 0 "http://127.0.0.1:$SHORT/" 2>/dev/null)
rc=$?
check "short body (20 of Content-Length 100): non-zero exit, result=short_body" \
	test "$rc" -ne 0 -a "$(kv result "$line")" = short_body -a "$(kv body "$line")" = 20
start=$(now_ns)
line=$("$HTTP_GET" --pause 0 --time-limit 0.5 "http://127.0.0.1:$SILENT/" 2>/dev/null)
rc=$?
wall=$(ms_since "$start")
check "--time-limit 0.5 on a server that never answers: timeout after ${wall} ms" \
	test "$rc" -ne 0 -a "$(kv result "$line")" = timeout -a "$wall" -lt 2000

# --source: the connection comes from that address (nginx logs it).
"$HTTP_GET" --quiet --pause 0 --source 127.0.0.2 "$BASE/who"
check "--source 127.0.0.2: nginx saw the request come from it ($(tr '\n' ' ' <"$T/nginx/who.log"))" \
	test "$(tail -n 1 "$T/nginx/who.log")" = 127.0.0.2
"$HTTP_GET" --quiet --pause 0 --source 10.0.0.300 "$BASE/small" 2>/dev/null
check "--source 10.0.0.300 (not an address) exits 2" test $? -eq 2

out=$("$HTTP_GET" --quiet --pause 0 "$BASE/small")
check "--quiet prints nothing on success" test -z "$out"

finish
