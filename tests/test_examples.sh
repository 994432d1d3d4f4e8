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
	hreq '/api/items?done=true'
	jcheck "json: ?done=true" 200 '.total == 1 and .items[0].id == 2'
	hreq '/api/items?limit=abc'
	jcheck "json: ?limit=abc: 400 as JSON" 400 \
		'.status == 400 and (.error | test("limit"))'
	hreq '/api/items?limit=1001'
	jcheck "json: ?limit above 1000: 400" 400 '.status == 400'
	hreq /api/items/3
	jcheck "json: GET /api/items/3" 200 '.id == 3 and (.title | test("☃"))'
	hreq -X PUT "${j[@]}" --data-binary '{"title":"buy oat milk","done":true}' \
		/api/items/1
	jcheck "json: PUT /api/items/1 replaces it" 200 \
		'.id == 1 and .title == "buy oat milk" and .done == true'
	hreq /api/items/1
	jcheck "json: GET /api/items/1 after PUT" 200 '.title == "buy oat milk"'
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
	jcheck "json: POST 20 kB (cap 16 KiB, evfcgi_body_limit): 413 as JSON" 413 \
		'.status == 413'
	hreq -X PATCH "${j[@]}" --data-binary '{}' /api/items/2
	jcheck "json: PATCH /api/items/2: 405 as JSON" 405 '.status == 405'
	hcheck "json: PATCH /api/items/2: Allow" 405 Allow "GET, HEAD, PUT, DELETE"
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

json_checks
finish
