#!/bin/bash
# The handler API from outside: README's first handler and the library
# page's "Writing a handler" example (docs/library.md), each built from
# the page's own text against src/libevfcgi.a and asked over FastCGI; then evfcgid behind the real nginx (tests/frontends.sh): header
# lines (Location, Set-Cookie twice), a percent-encoded path, 405 with
# Allow, a POST body streamed to /upload past --max-body; and 64 MiB
# through cgi-fcgi with the daemon's held input bounded.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

command -v cgi-fcgi >/dev/null || { not_ok "cgi-fcgi is installed"; finish; }

# example PAGE: the C between PAGE's example markers into $T/hi.c.
example() {
	sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' "$TOP/$1" |
		sed '1d;$d' | sed '1{/^```/d};${/^```/d}' >"$T/hi.c"
}

# build_example PAGE: its example compiled warning-free and started on a
# free port, $port; 1 if it did not compile.
build_example() {
	example "$1"
	check "$1 example extracted ($(wc -l <"$T/hi.c") lines)" grep -q 'evfcgi_run' "$T/hi.c"
	if cc -std=c11 -Wall -Wextra -Werror -I"$TOP/src/engine" -o "$T/hi" "$T/hi.c" \
		"$TOP/src/libevfcgi.a" $(pkg-config --cflags --libs libevent 2>/dev/null || echo -levent) \
		2>"$T/hi.err"; then
		ok "$1 example compiles warning-free against src/libevfcgi.a"
	else
		sed 's/^/# /' "$T/hi.err"
		not_ok "$1 example compiles warning-free against src/libevfcgi.a"
		return 1
	fi
	port=$(freeport)
	spawn "$T/hi" "127.0.0.1:$port" 2>"$T/hi.log"
	wait_port "$port"
}

# --- README's first handler, as written: at most 25 lines.
if build_example README.md; then
	n=$(wc -l <"$T/hi.c")
	check "README.md example: at most 25 lines ($n)" test "$n" -le 25
	out=$(REQUEST_METHOD=GET REQUEST_URI=/hi cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null)
	check "README.md example: /hi answers 200" grep -q '^Status: 200' <<<"$out"
	check "README.md example: its body" test "$(body_of <<<"$out")" = hi
	kill "$SPAWNED"
fi

# --- The library page's example, as written.
if build_example docs/library.md; then
	out=$(REQUEST_METHOD=GET REQUEST_URI=/hi cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null)
	check "docs/library.md example: /hi answers 200" grep -q '^Status: 200' <<<"$out"
	check "docs/library.md example: its Set-Cookie line" grep -q $'^Set-Cookie: seen=1\r$' <<<"$out"
	check "docs/library.md example: its body" test "$(body_of <<<"$out")" = hi
	out=$(REQUEST_METHOD=DELETE REQUEST_URI=/hi cgi-fcgi -bind -connect "127.0.0.1:$port" </dev/null)
	check "docs/library.md example: DELETE /hi is 405" grep -q '^Status: 405' <<<"$out"
	check "docs/library.md example: 405 with Allow: GET, HEAD" grep -q $'^Allow: GET, HEAD\r$' <<<"$out"
fi

# --- 64 MiB straight over FastCGI, --max-body 1m: streamed, not capped,
# held to a watermark.
start_evfcgid --max-body 1m
A=127.0.0.1:$EVFCGID_PORT
head -c $((64 << 20)) /dev/urandom >"$T/up64"
want=$(cksum <"$T/up64")
out=$(REQUEST_METHOD=POST REQUEST_URI=/upload CONTENT_LENGTH=$((64 << 20)) \
	cgi-fcgi -bind -connect "$A" <"$T/up64" | body_of)
check "cgi-fcgi: 64 MiB POST /upload summed as cksum does ($out)" test "$out" = "$want"
read -r peak <<<"$(status_of "$A" peak_bytes_input)"
rss=$(rss_kib "$EVFCGID_PID")
check "cgi-fcgi: 64 MiB upload held at most 192 KiB of input (peak $peak bytes)" \
	test "${peak:-999999999}" -le $((192 << 10))
check "cgi-fcgi: daemon RSS after the upload under 16 MiB ($rss KiB)" test "$rss" -lt $((16 << 10))
out=$(REQUEST_METHOD=POST REQUEST_URI=/echo CONTENT_LENGTH=$((2 << 20)) \
	cgi-fcgi -bind -connect "$A" <"$T/up64" 2>/dev/null | head -1)
check "cgi-fcgi: a whole body (/echo) is still capped by --max-body (413)" \
	grep -q '^Status: 413' <<<"$out"

for uri in '/hel%6' '/hello%00' '/%G1'; do
	out=$(REQUEST_METHOD=GET REQUEST_URI=$uri cgi-fcgi -bind -connect "$A" </dev/null | head -1)
	check "cgi-fcgi: $uri is 400 from evfcgid" grep -q '^Status: 400' <<<"$out"
done
out=$(REQUEST_METHOD=GET REQUEST_URI='/hel%6co?x' cgi-fcgi -bind -connect "$A" </dev/null | body_of)
check "cgi-fcgi: /hel%6co?x is /hello" test "$out" = "Hello World"

# --- Behind nginx.
if [ ! -x "$NGINX" ] || ! command -v curl >/dev/null; then
	not_ok "nginx and curl are installed"
	finish
fi
if start_fe nginx "api" "$A"; then
	curl -s -D "$T/h" -o "$T/b" "$URL/redirect"
	tr -d '\r' <"$T/h" >"$T/hh"
	check "nginx: /redirect is 302" grep -q '^HTTP/1.1 302' "$T/hh"
	check "nginx: /redirect has Location /hello" grep -Eq '^Location: (http://[^/]*)?/hello$' "$T/hh"
	check "nginx: /redirect has both Set-Cookie lines, in order" \
		test "$(grep '^Set-Cookie:' "$T/hh" | tr '\n' '|')" = "Set-Cookie: a=1; Path=/|Set-Cookie: b=2; Path=/|"
	http_check "nginx: /hel%6co is /hello" "$URL/hel%6co" 200 "" text/plain
	check "nginx: /hel%6co answers Hello World" grep -qx 'Hello World' "$HTTP_BODY"
	code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/hello%00")
	check "nginx: /hello%00 is 400 (got $code)" test "$code" = 400
	curl -s -D "$T/h" -o "$T/b" "$URL/upload"
	tr -d '\r' <"$T/h" >"$T/hh"
	check "nginx: GET /upload is 405" grep -q '^HTTP/1.1 405' "$T/hh"
	check "nginx: 405 says Allow: POST, PUT" grep -qx 'Allow: POST, PUT' "$T/hh"
	head -c $((8 << 20)) "$T/up64" >"$T/up8"
	want=$(cksum <"$T/up8")
	got=$(curl -s --data-binary @"$T/up8" -H 'Content-Type: application/octet-stream' "$URL/upload")
	check "nginx: 8 MiB POST /upload streamed past --max-body 1m ($got)" test "$got" = "$want"
	got=$(curl -s -T "$T/up8" "$URL/upload")
	check "nginx: 8 MiB PUT /upload ($got)" test "$got" = "$want"
	read -r peak <<<"$(status_of "$A" peak_bytes_input)"
	# The body up to --low-water (64k) and a record, and the connection's
	# input buffer: two records, counted twice for its chains.
	check "nginx: the streamed uploads held at most 384 KiB (peak $peak bytes)" \
		test "${peak:-999999999}" -le $((384 << 10))
	stop_fe
fi
finish
