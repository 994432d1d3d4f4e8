# tests/http.sh: requests to the daemons and the checks of their answers:
# over FastCGI with libfcgi's cgi-fcgi, and over HTTP through a front end
# with curl.  Source it after tests/lib.sh (it uses T, ok, not_ok, check,
# pattern, now_ns and ms_since).

# --- FastCGI requests -----------------------------------------------------

# fcgi_req ADDR URI [BODYFILE]: one request through libfcgi's cgi-fcgi;
# prints the CGI response (headers and body) on stdout.
fcgi_req() {
	local uri=$2 q=""
	[[ $uri == *\?* ]] && q=${uri#*\?}
	if [ -n "${3:-}" ]; then
		REQUEST_METHOD=POST REQUEST_URI=$uri QUERY_STRING=$q \
		CONTENT_LENGTH=$(stat -c %s "$3") SCRIPT_NAME=${uri%%\?*} \
			cgi-fcgi -bind -connect "$1" <"$3"
	else
		REQUEST_METHOD=GET REQUEST_URI=$uri QUERY_STRING=$q \
		SCRIPT_NAME=${uri%%\?*} cgi-fcgi -bind -connect "$1" </dev/null
	fi
}

# body_of: strips the CGI header block from a response on stdin.
body_of() { sed '1,/^\r$/d'; }

# status_of ADDR KEY...: numbers from one /status of evfcgid (or
# blocking_fcgid), asked
# directly over FastCGI (ADDR as for cgi-fcgi -connect: HOST:PORT or a
# socket path), space-separated in the order asked.  That request counts
# in what it reports (one more request, one more connection).
status_of() {
	local addr=$1 k json out=""
	shift
	json=$(fcgi_req "$addr" /status 2>/dev/null)
	for k in "$@"; do
		out+="${out:+ }$(grep -o "\"$k\":[0-9]*" <<<"$json" | cut -d: -f2)"
	done
	echo "$out"
}

# --- HTTP through a front end (tests/test_nginx.sh, test_lighttpd.sh) ------

# http_check NAME URL STATUS [EXPECTED_BODY_FILE [TYPE [POST_FILE]]]: one
# request with curl (a POST of POST_FILE when given); ok when the answer
# has that HTTP status, a Content-Type (TYPE, if given), a Content-Length
# equal to the body's size, and the expected body byte for byte.  Leaves
# the body in $HTTP_BODY.
HTTP_NO=0
http_check() {
	local name=$1 url=$2 status=$3 exp=${4:-} type=${5:-} post=${6:-}
	local r=$T/http.$((++HTTP_NO)) code ct cl n why=""
	local -a args=(-sS -o "$r.b" -D "$r.h" -w '%{http_code}' --max-time 60)
	[ -n "$post" ] && args+=(--data-binary "@$post" -H 'Content-Type: application/octet-stream' -H 'Expect:')
	code=$(curl "${args[@]}" "$url" 2>"$r.err")
	HTTP_BODY=$r.b
	[ -e "$r.b" ] || : >"$r.b"
	ct=$(http_header "$r.h" Content-Type)
	cl=$(http_header "$r.h" Content-Length)
	n=$(stat -c %s "$r.b")
	[ "$code" = "$status" ] || why+=" HTTP $code (expected $status) $(head -c 200 "$r.err")"
	[ -n "$ct" ] || why+=" no Content-Type"
	[ -z "$type" ] || [ "$ct" = "$type" ] || why+=" Content-Type '$ct' (expected $type)"
	[ "$cl" = "$n" ] || why+=" Content-Length '$cl' for a body of $n bytes"
	if [ -n "$exp" ] && ! cmp -s "$r.b" "$exp"; then
		why+=" body of $n bytes differs from the expected $(stat -c %s "$exp")"
		why+=" ($(cmp "$r.b" "$exp" 2>&1 | head -n 1))"
	fi
	if [ -z "$why" ]; then ok "$name"; else echo "# $name:$why"; not_ok "$name"; fi
}

# http_header FILE NAME: the value of NAME in the last header block of a
# curl -D FILE (case-insensitive, CR removed).
http_header() {
	tr -d '\r' <"$1" | awk -v n="$2" 'BEGIN { n = tolower(n) }
		/^HTTP\// { v = "" }
		{ i = index($0, ":"); if (i && tolower(substr($0, 1, i - 1)) == n) {
			v = substr($0, i + 1); sub(/^[ \t]+/, "", v) } }
		END { print v }'
}

# jq_true FILTER FILE: FILE is JSON and FILTER is true of it.
jq_true() { jq -e "$1" "$2" >/dev/null 2>&1; }

# http_route_checks LABEL BASE_URL MAX_SIZE MAX_BODY: every demo route
# through a front end, byte for byte, against evfcgid started with
# --max-size MAX_SIZE --max-body MAX_BODY (both under 64 MiB, the front
# ends' own body cap).  Test names start with LABEL.
http_route_checks() {
	local l=$1 u=$2 maxsize=$3 maxbody=$4 n ms start
	mkdir -p "$T/exp"
	printf 'Hello World\n' >"$T/exp/hello"
	http_check "$l: /hello" "$u/hello" 200 "$T/exp/hello" text/plain
	pattern 96256 >"$T/exp/big"
	http_check "$l: /big, 96256 bytes" "$u/big" 200 "$T/exp/big"
	for n in 0 1 7 8 9 65527 65528 65535 65536 65537 131072 1048579; do
		[ -e "$T/exp/$n" ] || pattern "$n" >"$T/exp/$n"
		http_check "$l: /size?$n" "$u/size?$n" 200 "$T/exp/$n"
	done
	for n in 0 1 65536 1048579; do
		http_check "$l: /stream?$n" "$u/stream?$n" 200 "$T/exp/$n"
	done
	http_check "$l: /size above --max-size: 413" "$u/size?$((maxsize + 1))" 413
	[ -e "$T/exp/in.5m" ] || head -c 5242880 /dev/urandom >"$T/exp/in.5m"
	http_check "$l: POST /echo, 5 MiB of random bytes back" "$u/echo" 200 \
		"$T/exp/in.5m" "" "$T/exp/in.5m"
	: >"$T/exp/empty"
	http_check "$l: POST /echo, empty body" "$u/echo" 200 "$T/exp/empty" "" "$T/exp/empty"
	[ -e "$T/exp/over" ] || head -c "$((maxbody + 1))" /dev/zero >"$T/exp/over"
	http_check "$l: POST /echo above --max-body: 413" "$u/echo" 413 "" "" "$T/exp/over"
	printf 'slept 200 ms\n' >"$T/exp/slept"
	start=$(now_ns)
	http_check "$l: /sleep?200" "$u/sleep?200" 200 "$T/exp/slept"
	ms=$(ms_since "$start")
	check "$l: /sleep?200 took at least 200 ms ($ms ms)" test "$ms" -ge 200
	http_check "$l: /status, application/json" "$u/status" 200 "" application/json
	if command -v jq >/dev/null; then
		check "$l: /status is JSON with requests and connections_total" \
			jq_true '(.requests | numbers) and (.connections_total | numbers)' "$HTTP_BODY"
	else
		check "$l: /status has requests and connections_total" \
			grep -q '"requests":[0-9].*"connections_total":[0-9]\|"connections_total":[0-9].*"requests":[0-9]' "$HTTP_BODY"
	fi
	http_check "$l: /nope: 404" "$u/nope" 404
	http_check "$l: /size?abc: 400" "$u/size?abc" 400
	http_check "$l: /stream?12x: 400" "$u/stream?12x" 400
}
