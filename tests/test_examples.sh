#!/bin/bash
# The examples (examples/), each behind the real nginx (a copy of
# nginx.conf.example, tests/frontends.sh) and asked with curl: the JSON API
# (every route and error, checked with jq), the static file server (paths
# that try to leave its root, ranges, If-Modified-Since, MIME types, a
# 100 MiB file byte for byte and, read slowly, held to a watermark), and
# the server-sent events (streams held directly over FastCGI and through
# nginx, memory per client bounded, clients that go away dropped).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"

for p in curl jq python3; do
	command -v $p >/dev/null || { not_ok "$p is installed"; finish; }
done

# start_example NAME ARGS...: examples/NAME --listen on a free port (then
# ARGS), behind a fresh nginx; sets EX_ADDR, EX_PID and URL.
start_example() {
	local name=$1 port
	shift
	if [ ! -x "$TOP/examples/$name" ]; then
		not_ok "examples/$name is built (make)"
		return 1
	fi
	port=$(freeport)
	EX_ADDR=127.0.0.1:$port
	spawn "$TOP/examples/$name" --listen "$EX_ADDR" "$@" 2>>"$T/$name.log"
	EX_PID=$SPAWNED
	if ! wait_port "$port"; then
		not_ok "$name starts: $(tail -n 3 "$T/$name.log")"
		return 1
	fi
	start_fe nginx "$name" "$EX_ADDR"
}

# hreq CURL_ARGS... PATH: one request through $URL; sets CODE, and R: R.h
# holds the header, R.b the body.
R_NO=0
hreq() {
	local path=${!#}
	R=$T/r.$((++R_NO))
	CODE=$(curl -sS -o "$R.b" -D "$R.h" -w '%{http_code}' --max-time 30 \
		"${@:1:$#-1}" "$URL$path" 2>"$R.err")
	[ -e "$R.b" ] || : >"$R.b"
}

# hval NAME: a header of the last answer.
hval() { header_value "$R.h" "$1"; }

# jcheck NAME STATUS FILTER: ok when the last answer had STATUS, was
# application/json, and jq finds FILTER true of its body.
jcheck() {
	local why="" ct
	ct=$(hval Content-Type)
	[ "$CODE" = "$2" ] || why+=" HTTP $CODE (expected $2)"
	[ "$ct" = application/json ] || why+=" Content-Type '$ct'"
	jq -e "$3" "$R.b" >/dev/null 2>&1 ||
		why+=" jq '$3' is not true of: $(head -c 300 "$R.b")"
	report "$1" "$why"
}

# hcheck NAME STATUS [HEADER VALUE]...: ok when the last answer had STATUS
# and each HEADER that VALUE ("" for none).
hcheck() {
	local name=$1 why="" v
	[ "$CODE" = "$2" ] || why+=" HTTP $CODE (expected $2) $(head -c 200 "$R.err")"
	shift 2
	while [ $# -ge 2 ]; do
		v=$(hval "$1")
		[ "$v" = "$2" ] || why+=" $1 '$v' (expected '$2')"
		shift 2
	done
	report "$name" "$why"
}

# --- The JSON API -------------------------------------------------------

json_checks() {
	local j=(-H 'Content-Type: application/json')
	start_example json_api || return
	hreq /api/items
	jcheck "json: GET /api/items, empty" 200 '.items == [] and .total == 0'
	hreq "${j[@]}" --data-binary '{"title":"buy milk"}' /api/items
	jcheck "json: POST /api/items: 201, the item" 201 \
		'.id == 1 and .title == "buy milk" and .done == false'
	hcheck "json: POST /api/items: Location of the new item" 201 \
		Location /api/items/1
	hreq "${j[@]}" --data-binary '{"title":"walk","done":true}' /api/items
	jcheck "json: POST a second item, done" 201 '.id == 2 and .done == true'
	hreq "${j[@]}" --data-binary '{"title":"say \"hi\" \\ to \u2603 ☃\n"}' /api/items
	jcheck "json: POST a title with quotes, backslash, escapes, UTF-8" 201 \
		'.id == 3 and .title == "say \"hi\" \\ to ☃ ☃\n"'
	hreq /api/items
	jcheck "json: GET /api/items lists 3 in order" 200 \
		'.total == 3 and ([.items[].id] == [1, 2, 3])'
	hreq '/api/items?limit=1&offset=1'
	jcheck "json: ?limit=1&offset=1" 200 \
		'.items | length == 1 and .[0].id == 2'
	hreq '/api/items?offset=2&limit=5'
	jcheck "json: ?offset=2&limit=5" 200 '.total == 3 and ([.items[].id] == [3])'
	hreq '/api/items?limit=abc'
	jcheck "json: ?limit=abc: 400 as JSON" 400 \
		'.status == 400 and (.error | test("limit"))'
	hreq '/api/items?limit=1001'
	jcheck "json: ?limit above 1000: 400" 400 '.status == 400'
	hreq /api/items/3
	jcheck "json: GET /api/items/3" 200 '.id == 3 and (.title | test("☃"))'
	hreq -X DELETE /api/items/1
	hcheck "json: DELETE /api/items/1: 204, no Content-Length" 204 \
		Content-Length ""
	check "json: DELETE: no body" test ! -s "$R.b"
	hreq /api/items/1
	jcheck "json: GET a deleted item: 404 as JSON" 404 \
		'.status == 404 and .error == "no such item"'
	hreq /api/items/x1
	jcheck "json: GET /api/items/x1: 404" 404 '.status == 404'
	hreq -X DELETE /api/items/1
	jcheck "json: DELETE it again: 404" 404 '.status == 404'
	hreq "${j[@]}" --data-binary '{"title": "x",' /api/items
	jcheck "json: POST bad JSON: 400 saying where" 400 \
		'.status == 400 and (.error | test("bad JSON at line 1"))'
	hreq "${j[@]}" --data-binary '' /api/items
	jcheck "json: POST an empty body: 400" 400 '(.error | test("empty body"))'
	printf '{"title":"\xff"}' >"$T/bad-utf8.json"
	hreq "${j[@]}" --data-binary "@$T/bad-utf8.json" /api/items
	jcheck "json: POST a title that is not UTF-8: 400, still valid JSON" 400 \
		'.status == 400'
	hreq "${j[@]}" --data-binary '{"title":"a","title":"b"}' /api/items
	jcheck "json: POST a duplicate key: 400" 400 '.status == 400'
	hreq "${j[@]}" --data-binary '{"title":5}' /api/items
	jcheck "json: POST a title that is not a string: 400" 400 \
		'(.error | test("title"))'
	hreq "${j[@]}" --data-binary '{"title":"a","owner":"me"}' /api/items
	jcheck "json: POST an unknown member: 400" 400 '.status == 400'
	hreq "${j[@]}" --data-binary '[1,2]' /api/items
	jcheck "json: POST an array: 400" 400 '.status == 400'
	hreq "${j[@]}" --data-binary '{"title":""}' /api/items
	jcheck "json: POST an empty title: 400" 400 '(.error | test("title"))'
	hreq -H 'Content-Type: text/plain' --data-binary '{"title":"a"}' /api/items
	jcheck "json: POST text/plain: 415" 415 '.status == 415'
	head -c 20000 /dev/zero | tr '\0' ' ' >"$T/big.json"
	printf '{"title":"big"}' >>"$T/big.json"
	hreq "${j[@]}" --data-binary "@$T/big.json" /api/items
	jcheck "json: POST 20 kB (cap 16 KiB, evfcgi_route_body_limit): 413 as JSON" 413 \
		'.status == 413'
	hreq -X PUT "${j[@]}" --data-binary '{}' /api/items/2
	jcheck "json: PUT /api/items/2: 405 as JSON" 405 '.status == 405'
	hcheck "json: PUT /api/items/2: Allow" 405 Allow "GET, HEAD, DELETE"
	hreq -X DELETE /api/items
	hcheck "json: DELETE /api/items: 405 with Allow" 405 Allow "GET, HEAD, POST"
	hreq /elsewhere
	jcheck "json: another path: 404 as JSON" 404 '.status == 404'
	hreq /api/items/2%3F
	jcheck "json: an encoded '?' in the id: 404" 404 '.status == 404'
	hreq -I /api/items
	hcheck "json: HEAD /api/items: 200 (the engine drops the body)" 200 \
		Content-Type application/json
	hreq /api/items
	jcheck "json: after all that, 2 items" 200 \
		'.total == 2 and ([.items[].id] == [2, 3])'
	check "json: json_api still runs" kill -0 "$EX_PID"
	stop_fe
}

# --- The static file server -------------------------------------------

# fcgi_get URI [NAME=VALUE...]: GET URI straight over FastCGI (cgi-fcgi)
# to $EX_ADDR with these params too; the CGI response on stdout.
fcgi_get() {
	local uri=$1
	shift
	env REQUEST_METHOD=GET REQUEST_URI="$uri" QUERY_STRING= "$@" \
		cgi-fcgi -bind -connect "$EX_ADDR" </dev/null 2>/dev/null
}

# make_site DIR: the files the checks ask for, and some outside DIR.
make_site() {
	local w=$1
	mkdir -p "$w/sub/deep" "$w/emptydir" "$T/outside"
	printf 'hello\n' >"$w/hello.txt"
	printf '<p>page</p>\n' >"$w/page.html"
	printf 'p {}\n' >"$w/style.css"
	printf '{}\n' >"$w/data.json"
	printf '\x89PNG\r\n\x1a\n' >"$w/image.png"
	printf 'raw' >"$w/noext"
	: >"$w/empty.txt"
	printf '<p>index of sub</p>\n' >"$w/sub/index.html"
	printf 'deep\n' >"$w/sub/deep/file.txt"
	printf 'dotfile\n' >"$w/.secret"
	seq -w 0 199 | tr -d '\n' >"$w/digits"	# 600 bytes
	printf 'SECRET-OUTSIDE\n' >"$T/outside/secret.txt"
	ln -s ../outside/secret.txt "$w/link_out"
	ln -s ../outside "$w/dirlink"
	ln -s hello.txt "$w/link_in"
	mkfifo "$w/pipe"
	touch -d '2020-01-02 03:04:05 UTC' "$w/hello.txt"
	head -c 104857600 /dev/urandom >"$w/big.bin"
}

static_checks() {
	local w=$T/www lm a rss0 rss1 slow i out
	make_site "$w"
	start_example static_files "$w" || return
	hreq /hello.txt
	hcheck "static: /hello.txt" 200 Content-Type "text/plain; charset=utf-8" \
		Content-Length 6 Accept-Ranges bytes \
		Last-Modified "Thu, 02 Jan 2020 03:04:05 GMT"
	check "static: /hello.txt's bytes" cmp -s "$R.b" "$w/hello.txt"
	for a in "page.html text/html; charset=utf-8" "style.css text/css; charset=utf-8" \
	    "data.json application/json" "image.png image/png" \
	    "noext application/octet-stream" "empty.txt text/plain; charset=utf-8"; do
		hreq "/${a%% *}"
		hcheck "static: /${a%% *} is ${a#* }" 200 Content-Type "${a#* }" \
			Content-Length "$(stat -c %s "$w/${a%% *}")"
	done
	hreq /sub/deep/file.txt
	check "static: /sub/deep/file.txt" cmp -s "$R.b" "$w/sub/deep/file.txt"
	hreq /sub
	hcheck "static: /sub, a directory: 301 to /sub/" 301 Location /sub/
	hreq /sub/
	hcheck "static: /sub/ serves its index.html" 200 \
		Content-Type "text/html; charset=utf-8"
	check "static: /sub/'s bytes are index.html's" cmp -s "$R.b" "$w/sub/index.html"
	hreq /emptydir/
	hcheck "static: a directory without index.html: 403" 403
	hreq /nothing.txt
	hcheck "static: a missing file: 404" 404
	hreq /hello.txt/x
	hcheck "static: a file used as a directory: 404" 404
	hreq /.secret
	hcheck "static: a dot file: 404" 404
	hreq /pipe
	hcheck "static: a FIFO: 403, at once" 403
	hreq -X POST -d x /hello.txt
	hcheck "static: POST: 405 with Allow" 405 Allow "GET, HEAD"
	hreq -I /hello.txt
	hcheck "static: HEAD /hello.txt: its headers" 200 Content-Length 6

	# Leaving the root: symbolic links, and '..' plain or encoded.
	for a in /link_out /dirlink/secret.txt /link_in; do
		hreq "$a"
		hcheck "static: symbolic link $a: 403" 403
	done
	# Encoded dot segments that stay inside: nginx passes them on, and
	# the engine cleans the decoded path as nginx cleans its own.
	for a in /sub/%2e%2e/hello.txt /sub/%2E%2E/hello.txt /sub%2f..%2fhello.txt \
	    /sub/..%2fhello.txt; do
		hreq --path-as-is "$a"
		hcheck "static: $a (nginx passes it on): /hello.txt, 200" 200 \
			Content-Length 6
	done
	for a in /../outside/secret.txt /%2e%2e/outside/secret.txt \
	    /sub/../../outside/secret.txt /..%2f..%2foutside/secret.txt; do
		hreq --path-as-is "$a"
		check "static: $a through nginx: refused ($CODE), nothing leaks" \
			eval '[[ $CODE == 4?? ]] && ! grep -q SECRET "$R.b"'
		out=$(fcgi_get "$a")
		check "static: $a straight over FastCGI: 400 (above the root), nothing leaks" \
			eval '[[ $out == "Status: 400 "* ]] && [[ $out != *SECRET* ]]'
	done

	# If-Modified-Since, in the three date forms; the daemon itself
	# answers (asked over FastCGI too).
	lm="Thu, 02 Jan 2020 03:04:05 GMT"
	for a in "$lm" "Thursday, 02-Jan-20 03:04:05 GMT" "Thu Jan  2 03:04:05 2020" \
	    "Fri, 03 Jan 2020 00:00:00 GMT"; do
		hreq -H "If-Modified-Since: $a" /hello.txt
		hcheck "static: If-Modified-Since: $a: 304" 304 Last-Modified "$lm"
	done
	check "static: 304 has no body" test ! -s "$R.b"
	for a in "Thu, 02 Jan 2020 03:04:04 GMT" "yesterday"; do
		hreq -H "If-Modified-Since: $a" /hello.txt
		hcheck "static: If-Modified-Since: $a: 200" 200 Content-Length 6
	done
	out=$(fcgi_get /hello.txt "HTTP_IF_MODIFIED_SINCE=$lm")
	check "static: If-Modified-Since over FastCGI: 304 from the daemon" \
		eval '[[ $out == "Status: 304 "* ]]'

	# Ranges.
	hreq -H 'Range: bytes=10-19' /digits
	hcheck "static: Range bytes=10-19: 206" 206 Content-Range "bytes 10-19/600" \
		Content-Length 10
	check "static: bytes=10-19 are the file's" \
		eval '[ "$(cat "$R.b")" = "$(cut -c 11-20 "$w/digits")" ]'
	hreq -H 'Range: bytes=590-' /digits
	hcheck "static: Range bytes=590-: the last 10" 206 Content-Range "bytes 590-599/600"
	hreq -H 'Range: bytes=-5' /digits
	hcheck "static: Range bytes=-5" 206 Content-Range "bytes 595-599/600"
	check "static: bytes=-5 are the last 5" eval '[ "$(cat "$R.b")" = 98199 ]'
	hreq -H 'Range: bytes=500-9999' /digits
	hcheck "static: Range past the end is cut to it" 206 Content-Range "bytes 500-599/600"
	hreq -H 'Range: bytes=600-' /digits
	hcheck "static: Range bytes=600- (the size): 416" 416 Content-Range "bytes */600"
	hreq -H 'Range: bytes=-0' /digits
	hcheck "static: Range bytes=-0: 416" 416
	for a in "bytes=0-1,5-6" "bytes=5-2" "bytes=x-1" "items=0-1"; do
		hreq -H "Range: $a" /digits
		hcheck "static: Range $a: ignored, 200 and the whole file" 200 \
			Content-Length 600
	done
	hreq -H 'Range: bytes=0-0' -H "If-Range: $(header_value "$R.h" Last-Modified)" /digits
	hcheck "static: If-Range matching Last-Modified: 206" 206 Content-Range "bytes 0-0/600"
	hreq -H 'Range: bytes=0-0' -H 'If-Range: Mon, 01 Jan 2001 00:00:00 GMT' /digits
	hcheck "static: If-Range not matching: 200, whole" 200 Content-Length 600
	hreq -H 'Range: bytes=52428800-52429823' /big.bin
	hcheck "static: a range in the middle of 100 MiB" 206 Content-Length 1024
	check "static: that range byte for byte" cmp -s "$R.b" \
		<(tail -c +52428801 "$w/big.bin" | head -c 1024)

	# 100 MiB whole, then read slowly: the daemon holds a watermark.
	hreq /big.bin
	hcheck "static: 100 MiB" 200 Content-Length 104857600
	check "static: 100 MiB byte for byte (cmp)" cmp -s "$R.b" "$w/big.bin"
	rm -f "$R.b"
	rss0=$(rss_kib "$EX_PID")
	spawn curl -s -o /dev/null --limit-rate 1M --max-time 20 "$URL/big.bin"
	slow=$SPAWNED
	rss1=0
	for i in 1 2 3 4 5 6; do
		sleep 0.5
		a=$(rss_kib "$EX_PID")
		[ "$a" -gt "$rss1" ] && rss1=$a
	done
	echo "# static: RSS $rss0 KiB before, at most $rss1 KiB while a client reads 100 MiB at 1 MB/s"
	check "static: a slow client of 100 MiB costs under 4 MiB of RSS ($rss0 -> $rss1 KiB)" \
		test "$rss1" -le $((rss0 + 4096))
	check "static: the slow client is still reading" kill -0 "$slow"
	kill "$slow" 2>/dev/null
	wait "$slow" 2>/dev/null
	# nginx closes the backend connection once it sees its client gone;
	# the engine then closes the file (evfcgi_write_fd owns it).
	wait_until 10 eval '[ "$(ls -l "/proc/$EX_PID/fd" | grep -c "$w/")" = 0 ]'
	check "static: the slow client gone, no file of the root is left open" \
		eval '[ "$(ls -l "/proc/$EX_PID/fd" | grep -c "$w/")" = 0 ]'
	check "static: static_files still runs" kill -0 "$EX_PID"
	stop_fe
}

# --- Server-sent events -------------------------------------------------

# sse_stat NAME: a number from the /stats of the sse at $EX_ADDR, asked
# over FastCGI ("clients", "events").
sse_stat() {
	fcgi_get /stats | tr -d '\r' | awk -v k="$1" '$1 == k { print $2 }'
}

# sse_clients_are N: true when the sse at $EX_ADDR holds N streams.
sse_clients_are() { [ "$(sse_stat clients)" = "$1" ]; }

sse_checks() {
	local n=500 rss0 rss1 per sum i a bad="" rc
	local -a curls=()
	start_example sse --max-clients 600 || return
	rss0=$(rss_kib "$EX_PID")

	# 500 streams held straight over FastCGI: each gets its events, and
	# what they cost is measured while they are held.
	spawn python3 "$TOP/examples/sse_clients.py" "$EX_ADDR" -n "$n" \
		--seconds 3.5 >"$T/held"
	a=$SPAWNED
	if wait_for_line "$T/held" '^connected' 60; then
		sleep 1.5
		rss1=$(rss_kib "$EX_PID")
		check "sse: /stats counts the $n streams held" sse_clients_are "$n"
	fi
	wait "$a"
	sum=$(grep '^clients' "$T/held")
	echo "# sse: $sum"
	read -r _ _ _ c _ r _ e _ _ min _ _ _ _ <<<"$sum"
	check "sse: $n clients over FastCGI all connected (${c:-0}), none refused or ended" \
		test "${c:-0}" -eq "$n" -a "${r:-1}" -eq 0 -a "${e:-1}" -eq 0
	check "sse: each of the $n received at least 2 events in 3.5 s (least: ${min:-0})" \
		test "${min:-0}" -ge 2
	per=$(( (${rss1:-0} - rss0) / n ))
	echo "# sse: RSS $rss0 KiB, $rss1 KiB holding $n streams: $per KiB a client"
	# Measured here: 3 to 6 KiB a client (examples/sse-measure).
	check "sse: memory per client held under 16 KiB ($per KiB)" \
		test "${rss1:-0}" -gt 0 -a "$per" -le 16
	check "sse: the clients gone, the abort callbacks dropped them all" \
		wait_until 5 sse_clients_are 0

	# Through nginx, with curl.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		spawn curl -sN -D "$T/sse.h.$i" -o "$T/sse.b.$i" --max-time 20 "$URL/events"
		curls+=("$SPAWNED")
	done
	check "sse: 10 clients through nginx held" wait_until 5 sse_clients_are 10
	sleep 2.5
	kill "${curls[@]}" 2>/dev/null
	wait "${curls[@]}" 2>/dev/null
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(header_value "$T/sse.h.$i" Content-Type)" = text/event-stream ] ||
			bad+=" $i:type"
		[ "$(grep -c '^id: [0-9]*$' "$T/sse.b.$i")" -ge 2 ] || bad+=" $i:ids"
		[ "$(grep -c '^data: {"n":[0-9]*,"clients":[0-9]*,"time":[0-9]*}$' \
			"$T/sse.b.$i")" -ge 2 ] || bad+=" $i:data"
	done
	report "sse: through nginx, each client: text/event-stream, 2 events or more with id and data" "$bad"
	check "sse: curl killed, nginx closes the streams and the aborts drop them" \
		wait_until 10 sse_clients_are 0

	hreq -I /events
	hcheck "sse: HEAD /events: 200 at once, not a stream" 200 Content-Type text/event-stream
	hreq -X POST -d x /events
	hcheck "sse: POST /events: 405" 405 Allow "GET, HEAD"

	# SIGTERM: every stream ends with a last event, then the drain.
	curls=()
	for i in 1 2 3; do
		spawn curl -sN -o "$T/sse.t.$i" --max-time 20 "$URL/events"
		curls+=("$SPAWNED")
	done
	wait_until 5 sse_clients_are 3
	kill -TERM "$EX_PID"
	wait_gone 10 "$EX_PID"
	wait "$EX_PID"
	rc=$?
	check "sse: SIGTERM: exits 0 ($rc)" test "$rc" -eq 0
	wait_gone 10 "${curls[@]}"
	bad=""
	for i in 1 2 3; do
		[ "$(tail -n 2 "$T/sse.t.$i" | head -n 1)" = "data: server stopping" ] ||
			bad+=" $i: $(tail -c 60 "$T/sse.t.$i" | tr '\n' '|')"
	done
	report "sse: SIGTERM: each stream ends with event: bye" "$bad"
	stop_fe

	# --max-clients: the next ones get 503.
	start_example sse --max-clients 5 || return
	python3 "$TOP/examples/sse_clients.py" "$EX_ADDR" -n 8 --seconds 0.5 >"$T/held"
	read -r _ _ _ c _ r _ <<<"$(grep '^clients' "$T/held")"
	check "sse: --max-clients 5: 5 held, 3 refused (${c:-?}, ${r:-?})" \
		test "${c:-0}" -eq 5 -a "${r:-0}" -eq 3
	stop_fe
}

# --- Command lines ------------------------------------------------------

usage_checks() {
	local e port
	for e in json_api static_files sse; do
		capture "$TOP/examples/$e" --help
		check "$e --help: exit 0 and the usage" \
			eval '[ "$RC" = 0 ] && [[ $OUT == "usage: $e "* ]]'
		capture "$TOP/examples/$e" --no-such-flag
		check "$e --no-such-flag: exit 2 and the usage" \
			eval '[ "$RC" = 2 ] && [[ $ERR == *"usage: $e "* ]]'
	done
	capture "$TOP/examples/static_files"
	check "static_files without ROOT: exit 2, says so" \
		eval '[ "$RC" = 2 ] && [[ $ERR == *"expected one ROOT"* ]]'
	capture "$TOP/examples/static_files" --listen 127.0.0.1:1 "$T/none"
	check "static_files on a missing ROOT: exit 1, names it" \
		eval '[ "$RC" = 1 ] && [[ $ERR == *"$T/none"* ]]'
	capture "$TOP/examples/sse" </dev/null
	check "sse, no --listen and fd 0 not a socket: exit 1, says so" \
		eval '[ "$RC" = 1 ] && [[ $ERR == *"fd 0 is not a listening socket"* ]]'
	capture "$TOP/examples/sse" --interval 0
	check "sse --interval 0: exit 2" test "$RC" = 2
	# fd 0 a listening socket, as spawn-fcgi (and lighttpd) hand it over.
	if command -v spawn-fcgi >/dev/null; then
		port=$(freeport)
		spawn spawn-fcgi -n -a 127.0.0.1 -p "$port" -- \
			"$TOP/examples/json_api" 2>>"$T/json_api.log"
		EX_ADDR=127.0.0.1:$port
		wait_port "$port"
		check "json_api under spawn-fcgi (fd 0): answers" \
			eval '[[ $(fcgi_get /api/items) == *"\"total\":0"* ]]'
	fi
}

usage_checks
json_checks
static_checks
sse_checks
finish
