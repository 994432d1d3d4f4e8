#!/bin/bash
# CGI programs behind nginx through a CGI gateway (issue 12): for each
# backend of CGI_BACKENDS (fcgiwrap, the reference peer, and evfcgid
# --cgi), the scripts of tests/cgi through the same nginx configuration
# (tests/cgi.sh): the RFC 3875 environment and nothing of the daemon's,
# 32 MiB byte for byte, slow output streamed, crashes and missing or huge
# headers as 502, a stderr flood, a multi-megabyte body echoed (read
# whole, and streamed), output still queued when its script exits,
# Status and Location (local and client redirects), the command line of
# an indexed query (none by default; the words with evfcgid --cgi-argv),
# what must be refused,
# a hung script and its time limit, and whether a hung script blocks
# anyone else.
#
# Where fcgiwrap does not do what issue 12 demands of evfcgid, the check
# is made for evfcgid and what fcgiwrap does is recorded as a
# "# fcgiwrap: ..." line, not a failure.  A backend that cannot run
# (not installed, or an evfcgid without --cgi) is a failure.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }

WWW=$T/www
cgi_www "$WWW" || { not_ok "the CGI scripts are copied to $WWW"; finish; }
CGIBIN=$WWW/cgi-bin

# fetch URL [CURL_ARGS...]: one request; the body in $T/body, the headers
# in $T/head; sets CODE (000 when none came) and MS (the time it took).
fetch() {
	local url=$1 start
	shift
	start=$(now_ns)
	CODE=$(curl -s -o "$T/body" -D "$T/head" -w '%{http_code}' "$@" "$url")
	MS=$(ms_since "$start")
}

# head_value NAME: the value of the header NAME in $T/head (last one).
head_value() {
	tr -d '\r' <"$T/head" | sed -n "s/^$1: *//Ip" | tail -n 1
}

# demanded B: true if B is held to what issue 12 demands beyond what
# fcgiwrap does: a backend named in CGI_DEMAND (evfcgid; set
# CGI_DEMAND="evfcgid fcgiwrap" to see those checks fail on fcgiwrap).
CGI_DEMAND=${CGI_DEMAND:-evfcgid}
demanded() { [[ " $CGI_DEMAND " == *" $1 "* ]]; }

# expect B NAME CMD...: what issue 12 demands.  For a demanded backend it
# is a check; for another (fcgiwrap) CMD's outcome is recorded as a
# comment with WHAT, which the caller sets to what the backend did.
expect() {
	local b=$1 name=$2
	shift 2
	if demanded "$b"; then
		check "$b: $name" "$@"
	elif "$@"; then
		echo "# $b: $name: yes"
	else
		echo "# $b: $name: no: ${WHAT:-}"
	fi
}

# var FILE NAME: the value of NAME in the first section of an env dump.
var() { sed -n "/^-- environ\$/q; s/^$2=//p" "$1"; }

# has_set FILE NAME: NAME is set (perhaps empty) in an env dump.
has_set() { sed '/^-- environ$/q' "$1" | grep -q "^$2="; }

# env_faults FILE METHOD SCRIPT PATH_INFO QUERY: what is wrong with an env
# dump against RFC 3875 4.1 and what the request sent; nothing if all is
# well.
env_faults() {
	local f=$1 method=$2 script=$3 pi=$4 q=$5 v
	expect_var() {
		v=$(var "$f" "$1")
		[ "$v" = "$2" ] || printf " %s='%s' (expected '%s')" "$1" "$v" "$2"
	}
	expect_var GATEWAY_INTERFACE CGI/1.1
	expect_var SERVER_PROTOCOL HTTP/1.1
	expect_var REQUEST_METHOD "$method"
	expect_var SCRIPT_NAME "$script"
	expect_var REMOTE_ADDR 127.0.0.1
	expect_var SERVER_NAME localhost
	expect_var SERVER_PORT "$PORT"
	expect_var CWD "$CGIBIN"
	has_set "$f" QUERY_STRING || printf ' QUERY_STRING unset (must be set, empty if none)'
	expect_var QUERY_STRING "$q"
	# PATH_INFO: NULL (unset or empty) when the URI has none.
	[ -z "$pi" ] && [ -n "$(var "$f" PATH_INFO)" ] && printf ' PATH_INFO set without a path'
	[ -n "$pi" ] && expect_var PATH_INFO "$pi"
	v=$(var "$f" SERVER_SOFTWARE)
	[[ $v == nginx/* ]] || printf " SERVER_SOFTWARE='%s'" "$v"
	v=$(grep '^HTTP_X_TEST_HEADER=' "$f")
	[ "$v" = "HTTP_X_TEST_HEADER=hello, world" ] || printf " HTTP_X_TEST_HEADER line '%s'" "$v"
	# The Host header, one line; Debian's fastcgi_params (nginx-common
	# 1.22.1-9+deb12u11 on) sets HTTP_HOST to $host, without the port.
	v=$(grep '^HTTP_HOST=' "$f")
	[ "$v" = "HTTP_HOST=127.0.0.1:$PORT" ] || [ "$v" = HTTP_HOST=127.0.0.1 ] ||
		printf " HTTP_HOST line '%s'" "$v"
	if [ "$method" = POST ]; then
		expect_var CONTENT_LENGTH 11
		expect_var CONTENT_TYPE application/x-www-form-urlencoded
	elif [ -n "$(var "$f" CONTENT_LENGTH)" ]; then
		printf ' CONTENT_LENGTH set for a request without a body'
	fi
}

# check_env B SCRIPT METHOD PATH_INFO QUERY [leaks]: SCRIPT's env dump for
# one request; the RFC variables (both backends) and, with "leaks", no
# EVFCGI_SECRET and, from env.py, no descriptor beyond 0, 1 and 2
# (demanded of evfcgid).
check_env() {
	local b=$1 s=$2 method=$3 pi=$4 q=$5 leaks=${6:-} faults fds
	local -a args=(-H 'X-Test-Header: hello, world')
	[ "$method" = POST ] && args+=(--data-binary 'a=1&b=2+3&c')
	fetch "$CGI_URL/cgi-bin/$s$pi${q:+?$q}" "${args[@]}"
	faults=$(env_faults "$T/body" "$method" "/cgi-bin/$s" "$pi" "$q")
	[ "$CODE" = 200 ] || faults="status $CODE$faults"
	[ -z "$faults" ] || echo "# $s:$faults" >&2
	check "$b: $s, $method ${pi:-no path info}${q:+ ?$q}: the RFC 3875 4.1 variables" test -z "$faults"
	[ -n "$leaks" ] || return 0
	echo "# $b: $s: the script's PATH is $(sed -n 's/^PATH=//p' "$T/body")"
	WHAT="the script sees EVFCGI_SECRET=$(sed -n 's/^EVFCGI_SECRET=//p' "$T/body")"
	expect "$b" "$s: the daemon's own environment does not leak (EVFCGI_SECRET)" \
		eval '! grep -q "^EVFCGI_SECRET=" "$T/body"'
	if [ "$s" = env.py ]; then
		fds=$(var "$T/body" FDS)
		WHAT="open descriptors $fds"
		# Run by descriptor (evfcgid), a "#!" script's interpreter
		# reads it as /dev/fd/3: that one is the script's own file,
		# read-only, and no descriptor of the daemon's.
		expect "$b" "$s: no descriptor leaks into the script (0,1,2 open, or 3 its own file read-only as argv[0] /dev/fd/3: $fds $(var "$T/body" FD3))" \
			eval '[ "$fds" = 0,1,2 ] || { [ "$fds" = 0,1,2,3 ] &&
				[ "$(var "$T/body" FD3)" = "$CGIBIN/$s r" ] &&
				[ "$(var "$T/body" ARGV0)" = /dev/fd/3 ]; }'
	fi
}

# hello_within B SECONDS LABEL: hello.sh answers within SECONDS.
hello_within() {
	fetch "$CGI_URL/cgi-bin/hello.sh" --max-time "$2"
	[ "$CODE" = 200 ] && [ "$(cat "$T/body")" = "hello from cgi" ]
}

# check_bad B SCRIPT WHY: SCRIPT gets a 502, the backend serves the next
# request, and (demanded of evfcgid) the 502 is the gateway's own answer,
# not nginx's reaction to what the gateway passed on (nginx logs no
# upstream error), and the gateway's log names the script.
check_bad() {
	local b=$1 s=$2 why=$3 n0 nginx_says
	n0=$(wc -l <"$CGI_FE_DIR/error.log")
	fetch "$CGI_URL/cgi-bin/$s" --max-time 10
	check "$b: $s ($why): 502 (got $CODE)" test "$CODE" = 502
	sleep 0.1
	nginx_says=$(tail -n "+$((n0 + 1))" "$CGI_FE_DIR/error.log" | grep -o 'upstream [^,]*' | head -n 1)
	WHAT="the 502 is nginx's, which logged: $nginx_says"
	expect "$b" "$s: the 502 is the gateway's own answer (nginx logged: ${nginx_says:-nothing})" \
		test -z "$nginx_says"
	check "$b: after $s the backend still answers" hello_within "$b" 5
	demanded "$b" &&
		check "$b: $s: the log gives a reason naming the script" grep -q "$s" "$CGI_LOG"
}

# check_refused B NAME WANT: NAME under /cgi-bin must not run: status WANT
# (a regex, 403|404) and, for evfcgid, a logged reason naming it.
check_refused() {
	local b=$1 s=$2 want=$3
	fetch "$CGI_URL/cgi-bin/$s"
	WHAT="status $CODE, body '$(head -c 60 "$T/body" | tr '\n' ' ')'"
	expect "$b" "$s: refused with $want (got $CODE)" \
		eval '[[ $CODE =~ ^($want)$ ]] && ! grep -q "^ran$\|^hello from cgi$" "$T/body"'
	demanded "$b" &&
		check "$b: $s: the refusal is logged naming it" grep -q "$s" "$CGI_LOG"
}

# run_backend B: every check against backend B.
run_backend() {
	local b=$1 url sum exp pid t0 ms lines first last n i
	start_cgi_backend "$b" "$CGIBIN" tcp 4 ||
		{ not_ok "$b: starts (log: $(tail -n 3 "$CGI_LOG"))"; return; }
	local addr=$CGI_ADDR
	start_cgi_nginx "$addr" "$WWW" || { not_ok "$b: nginx in front of it starts"; return; }
	PORT=${CGI_URL##*:}

	# --- The environment.
	check_env "$b" env.sh GET "" "" leaks
	check_env "$b" env.sh GET /extra/path 'a=1&b=two%20words'
	check_env "$b" env.py GET /x 'q' leaks
	check_env "$b" env.py POST "" ""
	check_env "$b" env.sh POST /p 'k=v'

	# --- Status and Location (RFC 3875 6.2, 6.3).
	fetch "$CGI_URL/cgi-bin/status.sh"
	check "$b: Status: 404 Not Here: 404 with the document ($CODE)" \
		eval '[ "$CODE" = 404 ] && [ "$(cat "$T/body")" = "not here" ]'
	check "$b: Status: 404 Not Here: the status line keeps the program's phrase ($(head -n 1 "$T/head" | tr -d '\r'))" \
		eval '[ "$(head -n 1 "$T/head" | tr -d "\r")" = "HTTP/1.1 404 Not Here" ]'
	# --- The command line of an indexed query (RFC 3875 4.4): none by
	# default (evfcgid takes the words only with --cgi-argv, below).
	fetch "$CGI_URL/cgi-bin/args.sh?git+log%2bx+a%20b"
	check "$b: indexed query git+log%2bx+a%20b: no arguments by default ($(head -n 1 "$T/body"))" \
		eval '[ "$CODE" = 200 ] && [ "$(cat "$T/body")" = 0 ]'
	fetch "$CGI_URL/cgi-bin/args.sh?a=1+b"
	check "$b: a query with '=' is no indexed query: no arguments ($(head -n 1 "$T/body"))" \
		eval '[ "$CODE" = 200 ] && [ "$(cat "$T/body")" = 0 ]'
	fetch "$CGI_URL/cgi-bin/redirect-client.py"
	check "$b: client redirect (Location: http://...): 302 to it ($CODE, $(head_value Location))" \
		eval '[ "$CODE" = 302 ] && [ "$(head_value Location)" = "http://example.invalid/moved?x=1" ]'
	fetch "$CGI_URL/cgi-bin/redirect-doc.pl"
	check "$b: client redirect with document: 301, Location and body ($CODE)" \
		eval '[ "$CODE" = 301 ] && [ "$(head_value Location)" = http://example.invalid/new ] &&
			[ "$(cat "$T/body")" = "moved to http://example.invalid/new" ]'
	fetch "$CGI_URL/cgi-bin/redirect-local.sh"
	WHAT="status $CODE, Location '$(head_value Location)', body '$(head -c 80 "$T/body")'"
	expect "$b" "local redirect (Location: /cgi-bin/target.py?from=local): the target's answer" \
		eval '[ "$CODE" = 200 ] &&
			[ "$(cat "$T/body")" = "target SCRIPT_NAME=/cgi-bin/target.py QUERY_STRING=from=local" ]'

	# --- Output: large, slow.
	fetch "$CGI_URL/cgi-bin/big.sh" --max-time 30
	sum=$(sha256sum <"$T/body" | cut -d' ' -f1)
	exp=$(pattern 33554432 | sha256sum | cut -d' ' -f1)
	check "$b: big.sh: 32 MiB byte for byte (sha256, $(stat -c %s "$T/body") bytes, $MS ms)" \
		test "$CODE:$sum" = "200:$exp"

	t0=$(now_ns)
	curl -sN --max-time 10 "$CGI_URL/cgi-bin/slow.py" | while IFS= read -r line; do
		echo "$(ms_since "$t0") $line"
	done >"$T/slow"
	lines=$(wc -l <"$T/slow")
	first=$(awk 'NR == 1 { print $1 }' "$T/slow")
	last=$(awk 'END { print $1 }' "$T/slow")
	check "$b: slow.py: all 10 lines ($lines), over at least 1.8 s (${last:-?} ms)" \
		eval '[ "$lines" = 10 ] && [ "$(cut -d" " -f2- "$T/slow" | tr "\n" ,)" = "$(seq -f "line %g" 10 | tr "\n" ,)" ] &&
			[ "${last:-0}" -ge 1800 ]'
	WHAT="the first line came after ${first:-?} ms, the last after ${last:-?} ms (held until the end)"
	expect "$b" "slow.py: streamed, the first line within 1 s (${first:-?} ms)" \
		test "${first:-99999}" -lt 1000

	# --- Broken scripts: 502, and the backend goes on.
	check_bad "$b" crash.sh "SIGSEGV before any output"
	check_bad "$b" crash.py "SIGSEGV within its header"
	check_bad "$b" noheader.sh "a body and no header"
	check_bad "$b" bigheader.pl "an 88800-byte header"

	# --- A stderr flood.
	n=$(grep -c 'stderr flood' "$CGI_LOG")
	fetch "$CGI_URL/cgi-bin/stderr.sh" --max-time 20
	check "$b: stderr.sh (100000 lines to stderr): 200 and its body ($CODE, $MS ms)" \
		eval '[ "$CODE" = 200 ] && [ "$(cat "$T/body")" = "stderr flood done" ]'
	sleep 0.5
	echo "# $b: stderr.sh: $(( $(grep -c 'stderr flood' "$CGI_LOG") - n )) of its 100000 lines in the log"
	demanded "$b" &&
		check "$b: stderr.sh: its stderr is logged line by line, naming the script" \
			grep -q 'stderr\.sh.*stderr flood 1$' "$CGI_LOG"

	# --- Request bodies.
	head -c 5242880 /dev/urandom >"$T/in.5m"
	fetch "$CGI_URL/cgi-bin/echo.pl" --max-time 20 --data-binary "@$T/in.5m" \
		-H 'Content-Type: application/octet-stream' -H 'Expect:'
	check "$b: echo.pl: a 5 MiB POST body read whole and echoed byte for byte ($CODE, $MS ms)" \
		eval '[ "$CODE" = 200 ] && same_file "$T/body" "$T/in.5m"'

	# --- Path checks.
	check_refused "$b" noexec.sh '403|404'
	check_refused "$b" adir '403|404'
	check_refused "$b" outside.sh '403|404'
	check_refused "$b" nosuch.sh 404

	# --- Output still queued when its script exits: 8 MiB to a client
	# reading 4 MiB/s; meanwhile a small request is not held up.
	spawn curl -s -o "$T/queued" -D "$T/queued.head" --limit-rate 4m --max-time 30 \
		"$CGI_URL/cgi-bin/queued.sh"
	i=$SPAWNED
	sleep 0.5
	check "$b: hello.sh answers within 1 s beside a slow 8 MiB download" hello_within "$b" 1
	wait "$i"
	pid=$(tr -d '\r' <"$T/queued.head" | sed -n 's/^X-Pid: *//Ip')
	cgi_own_pid "$pid"
	exp=$(pattern 8388608 | sha256sum | cut -d' ' -f1)
	check "$b: queued.sh: 8 MiB to a slow client, whole after the script exited" \
		test "$(sha256sum <"$T/queued" | cut -d' ' -f1)" = "$exp"
	check "$b: queued.sh: the script (pid ${pid:-?}) was reaped" \
		eval '[ -n "$pid" ] && wait_gone 2 "$pid"'

	# --- A body echoed as it is read: output fills the pipe long before
	# the input is all in, so the gateway must feed stdin and drain
	# stdout at once.
	fetch "$CGI_URL/cgi-bin/echo-stream.sh" --max-time 10 --data-binary "@$T/in.5m" \
		-H 'Content-Type: application/octet-stream' -H 'Expect:'
	WHAT="status $CODE, $(stat -c %s "$T/body") of 5242880 bytes back after $MS ms (a deadlock: it writes the whole body before reading any output)"
	expect "$b" "echo-stream.sh: a 5 MiB body echoed while it is read, byte for byte" \
		eval '[ "$CODE" = 200 ] && same_file "$T/body" "$T/in.5m"'

	# --- A hung script: the time limit.
	fetch "$CGI_URL/cgi-bin/hang.sh" --max-time $((CGI_TIMEOUT + 4))
	pid=$(head_value X-Pid)
	cgi_own_pid "$pid"
	WHAT="status $CODE after $MS ms (curl gave up), X-Pid '${pid}'; no time limit"
	expect "$b" "hang.sh: ended by the time limit ($CGI_TIMEOUT s) within $((CGI_TIMEOUT + 2)) s ($MS ms)" \
		eval '[ "$CODE" = 200 ] && [ "$MS" -le $(( (CGI_TIMEOUT + 2) * 1000 )) ] &&
			[ -n "$pid" ] && wait_gone 2 "$pid"'
	demanded "$b" && check "$b: hang.sh: the time limit is logged" grep -q 'hang\.sh' "$CGI_LOG"

	# --- A client that goes away: nginx closes the FastCGI connection,
	# and the gateway's next write of the program's output fails.  (A
	# peer may half-close and still read its answers, so a closed
	# connection is known only by a write: a silent program is ended by
	# its time limit, as above.)  The client leaves once it has the header,
	# waited for, not timed: a loaded machine may take a second to start
	# the script (-N: curl flushes a -D file only at its end).
	rm -f "$T/head"
	spawn curl -s -N -i -o "$T/head" --max-time 30 "$CGI_URL/cgi-bin/drip.sh"
	# (fcgiwrap passes no header on before the end: a second for it.)
	wait_until "$(demanded "$b" && echo 10 || echo 1)" grep -qi '^X-Pid:' "$T/head"
	pid=$(head_value X-Pid)
	cgi_own_pid "$pid"
	kill "$SPAWNED" 2>/dev/null
	WHAT="X-Pid '$pid' (headers not passed on before the end), the script still runs"
	expect "$b" "drip.sh: a client that goes away mid-answer ends the script within 2 s" \
		eval '[ -n "$pid" ] && wait_gone 2 "$pid"'
	stop_cgi_nginx
	stop_cgi_backend

	# --- One hung script must not block anyone else: fcgiwrap with a
	# single child, evfcgid as it is.
	start_cgi_backend "$b" "$CGIBIN" tcp 1 || { not_ok "$b: a second instance starts"; return; }
	start_cgi_nginx "$CGI_ADDR" "$WWW" || { not_ok "$b: nginx in front of it starts"; return; }
	spawn curl -s -o /dev/null --max-time $((CGI_TIMEOUT + 4)) "$CGI_URL/cgi-bin/hang.sh"
	sleep 0.3
	hello_within "$b" 2
	WHAT="status $CODE after $MS ms: the one child is held by hang.sh"
	expect "$b" "hello.sh answers within 2 s while hang.sh hangs ($MS ms)" \
		test "$CODE" = 200
	stop_cgi_nginx
	stop_cgi_backend

	# --- The same over a unix socket.
	start_cgi_backend "$b" "$CGIBIN" unix 2 || { not_ok "$b: starts on a unix socket"; return; }
	start_cgi_nginx "$CGI_ADDR" "$WWW" || { not_ok "$b: nginx in front of it starts"; return; }
	PORT=${CGI_URL##*:}
	check_env "$b" env.sh GET /over/unix 'u=1'
	stop_cgi_nginx
	stop_cgi_backend

	# --- evfcgid --cgi-argv: an indexed query's words are the arguments.
	[ "$b" = evfcgid ] || return 0
	CGI_EVFCGID_FLAGS=(--cgi-argv)
	start_cgi_backend "$b" "$CGIBIN" tcp || { not_ok "$b --cgi-argv: starts"; return; }
	CGI_EVFCGID_FLAGS=()
	start_cgi_nginx "$CGI_ADDR" "$WWW" || { not_ok "$b: nginx in front of it starts"; return; }
	fetch "$CGI_URL/cgi-bin/args.sh?git+log%2bx+a%20b"
	check "$b --cgi-argv: indexed query git+log%2bx+a%20b: the words, decoded, are the arguments ($(tr '\n' ' ' <"$T/body"))" \
		eval '[ "$CODE" = 200 ] && [ "$(cat "$T/body")" = "$(printf "3\n[git]\n[log+x]\n[a b]")" ]'
	fetch "$CGI_URL/cgi-bin/args.sh?a=1+b"
	check "$b --cgi-argv: a query with '=' is no indexed query: no arguments ($(head -n 1 "$T/body"))" \
		eval '[ "$CODE" = 200 ] && [ "$(cat "$T/body")" = 0 ]'
	stop_cgi_nginx
	stop_cgi_backend
}

cgi_each_backend run_backend
finish
