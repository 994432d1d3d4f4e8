#!/bin/bash
# evfcgid --cgi against a hostile client (issue 18), over raw FastCGI
# (params as a web server would send them, duplicates and all): the query
# string gives no arguments by default, and none that start with '-'
# with --cgi-argv (php-cgi's CVE-2012-1823, cgit's --scan-tree); a local
# redirect ("Location: /path" echoed from the query) is resolved like a
# request (dot segments, escaped or not, and escaped '/' never leave the
# document root), runs only inside the CGI root, and passes no arguments;
# a program is checked when it runs and run from what was checked (a
# file swapped for a symlink out of the root while its request waits in
# the queue is refused); a parameter given twice is read as its last,
# by the gateway and in the program's environment alike, SCRIPT_FILENAME
# is the path checked and PATH_TRANSLATED is not passed on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v perl >/dev/null || { not_ok "perl is installed"; finish; }
cgi_backend_usable evfcgid || { not_ok "evfcgid --cgi: $CGI_SKIP"; finish; }

WWW=$T/www
cgi_www "$WWW" || { not_ok "the CGI scripts are copied to $WWW"; finish; }
CGIBIN=$WWW/cgi-bin

# A FastCGI client for what nginx would never send: perl -e
# "$FCGI_RAW_PL" ADDR NAME=VALUE...: one request (a RESPONDER, no body)
# with exactly those params, in that order, duplicates kept; the STDOUT
# stream on stdout, and exit 1 without an END_REQUEST.
FCGI_RAW_PL='
use strict; use warnings; use Socket qw(:all);
my $addr = shift; my $s;
my ($h, $p) = $addr =~ /^(.*):(\d+)$/ or die "ADDR: HOST:PORT";
socket($s, AF_INET, SOCK_STREAM, 0) or die "socket: $!";
connect($s, pack_sockaddr_in($p, inet_aton($h))) or die "connect $addr: $!";
binmode $s;
sub len { my $n = length $_[0]; $n < 128 ? pack("C", $n) : pack("N", $n | 0x80000000) }
my $nv = "";
for (@ARGV) { my ($k, $v) = /^([^=]*)=(.*)$/s or die "NAME=VALUE: $_"; $nv .= len($k) . len($v) . $k . $v }
sub rec { my ($t, $c) = @_; my $pad = (8 - length($c) % 8) % 8;
	pack("CCnnCC", 1, $t, 1, length $c, $pad, 0) . $c . ("\0" x $pad) }
my $req = rec(1, pack("nCx5", 1, 0));
$req .= rec(4, substr($nv, $_ * 65528, 65528)) for 0 .. int((length($nv) - 1) / 65528);
$req .= rec(4, "") . rec(5, "");
syswrite($s, $req) == length $req or die "write: $!";
my ($buf, $n) = ("", 0);
while (($n = sysread($s, $buf, 65536, length $buf))) {}
my ($out, $end) = ("", 0);
while (length($buf) >= 8) {
	my ($v, $t, $id, $clen, $plen) = unpack("CCnnC", $buf);
	last if length($buf) < 8 + $clen + $plen;
	$out .= substr($buf, 8, $clen) if $t == 6;
	$end = 1 if $t == 3;
	substr($buf, 0, 8 + $clen + $plen) = "";
}
binmode STDOUT; print $out; exit($end ? 0 : 1);
'
RAW_NO=0

# raw NAME=VALUE...: one request to $CGI_ADDR with these params; the
# response in $T/raw.N (RESP), its Status in CODE (200 when it has none
# but a Content-Type), its body in BODY.
raw() {
	RESP=$T/raw.$((++RAW_NO)).$BASHPID
	timeout 20 perl -e "$FCGI_RAW_PL" "$CGI_ADDR" "$@" >"$RESP" 2>"$RESP.err"
	CODE=$(sed -n '1,/^\r*$/{s/^Status: *\([0-9]*\).*/\1/Ip}' "$RESP" | head -n 1)
	[ -z "$CODE" ] && grep -qi '^Content-Type:' "$RESP" && CODE=200
	BODY=$(sed '1,/^\r*$/d' "$RESP")
}

# get SCRIPT [QUERY] [NAME=VALUE...]: raw, for a GET of /cgi-bin/SCRIPT
# as nginx's CGI location sends it (tests/cgi.sh; DOCUMENT_ROOT is DOCROOT,
# else $WWW), and the params given after (sent after nginx's).
get() {
	local s=$1 q=${2:-}
	shift 2
	raw "SCRIPT_FILENAME=$CGIBIN/$s" "SCRIPT_NAME=/cgi-bin/$s" \
		"REQUEST_METHOD=GET" "QUERY_STRING=$q" "REQUEST_URI=/cgi-bin/$s${q:+?$q}" \
		"DOCUMENT_URI=/cgi-bin/$s" "DOCUMENT_ROOT=${DOCROOT:-$WWW}" "SERVER_PROTOCOL=HTTP/1.1" \
		"GATEWAY_INTERFACE=CGI/1.1" "REMOTE_ADDR=127.0.0.1" "SERVER_NAME=localhost" \
		"SERVER_PORT=80" "$@"
}

# new_log_lines: the lines $CGI_LOG gained since the last call (all of
# it, the first time for a new daemon's log).
LOG_SEEN=0
new_log_lines() {
	local n
	n=$(wc -l <"$CGI_LOG")
	[ "$n" -lt "$LOG_SEEN" ] && LOG_SEEN=0	# another daemon's log
	tail -n "+$((LOG_SEEN + 1))" "$CGI_LOG" | head -n "$((n - LOG_SEEN))"
	LOG_SEEN=$n
}

# --- 1. Local redirects resolved like a request's, inside the root. ----
# Run from a document root of $CGIBIN with the whole of $WWW as the CGI
# root, a redirect that climbs out of the document root (dot segments,
# escaped or not, or an escaped '/') would reach $WWW/outside/hello.sh,
# inside the CGI root: refused all the same (500, one logged line).
redir() { DOCROOT=${2:-$WWW} get redirect-to.sh "to=$1"; }
start_evfcgid_cgi "$WWW" || { not_ok "evfcgid --cgi starts"; finish; }
for to in /../outside/hello.sh /%2e%2e/outside/hello.sh /%2E%2E/outside/hello.sh \
	'/..%2foutside/hello.sh' '/x/%2e%2e/..%2Foutside/hello.sh' '/./../outside/hello.sh' \
	'/../../../../usr/bin/env?sh+-c+touch%20'"$T"'/pwned'; do
	new_log_lines >/dev/null
	redir "$to" "$CGIBIN"
	lines=$(new_log_lines)
	check "redirect: Location $to from a document root of cgi-bin: 500, nothing run ($CODE, '$(echo "$BODY" | head -c 40)')" \
		eval '[ "$CODE" = 500 ] && [[ $BODY != *"hello from cgi"* ]] && [ ! -e "$T/pwned" ]'
	check "redirect: Location $to: one line logged saying why ($(echo "$lines" | grep -c .): $(echo "$lines" | head -n 1 | cut -c1-160))" \
		eval '[ "$(echo "$lines" | grep -c .)" = 1 ] && echo "$lines" | grep -q "local redirect"'
done
# Dot segments that stay inside are resolved, as a server would.
for to in /cgi-bin/target.py /cgi-bin/./x/../target.py /cgi-bin/%74arget.py /x/%2e%2e/cgi-bin/target.py; do
	redir "$to?from=$RAW_NO"
	check "redirect: Location $to runs cgi-bin/target.py ($CODE, '$BODY')" \
		test "$CODE:$BODY" = "200:target SCRIPT_NAME=/cgi-bin/target.py QUERY_STRING=from=$((RAW_NO - 1))"
done
for q in -s git+log; do
	redir "/cgi-bin/args.sh?$q"
	check "redirect: Location /cgi-bin/args.sh?$q: no arguments ($(echo "$BODY" | tr '\n' ' '))" \
		test "$CODE:$BODY" = "200:0"
done
stop_cgi_backend

# With the CGI root at cgi-bin: a program outside it is refused (500).
# And a redirect passes no arguments, even with --cgi-argv.
CGI_EVFCGID_FLAGS=(--cgi-argv)
if start_evfcgid_cgi "$CGIBIN"; then
	new_log_lines >/dev/null
	redir /outside/hello.sh
	lines=$(new_log_lines)
	check "redirect: Location /outside/hello.sh, outside the CGI root: 500 ($CODE, '$(echo "$BODY" | head -c 40)')" \
		eval '[ "$CODE" = 500 ] && [[ $BODY != *"hello from cgi"* ]]'
	check "redirect: outside the CGI root: one line logged saying why ($(echo "$lines" | head -n 1 | cut -c1-160))" \
		eval '[ "$(echo "$lines" | grep -c .)" = 1 ] && echo "$lines" | grep -q "local redirect.*outside"'
	for q in -s --help git+log; do
		redir "/cgi-bin/args.sh?$q"
		check "redirect: Location /cgi-bin/args.sh?$q: no arguments, even with --cgi-argv ($(echo "$BODY" | tr '\n' ' '))" \
			test "$CODE:$BODY" = "200:0"
	done
	redir "/cgi-bin/env.sh/p/../i?a=b"
	check "redirect: Location /cgi-bin/env.sh/p/../i: PATH_INFO /i, QUERY_STRING a=b" \
		eval '[ "$CODE" = 200 ] && grep -qx "PATH_INFO=/i" <<<"$BODY" && grep -qx "QUERY_STRING=a=b" <<<"$BODY"'
else
	not_ok "evfcgid --cgi --cgi-argv starts"
fi
CGI_EVFCGID_FLAGS=()
stop_cgi_backend

# --- 2. No arguments from the query by default. ------------------------
start_evfcgid_cgi "$CGIBIN" || { not_ok "evfcgid --cgi starts"; finish; }
for q in --help -s git+log '-d+allow_url_include%3D1' '%2D%2Dscan-tree%3D/etc'; do
	get args.sh "$q"
	check "argv, default: ?$q gives the program no arguments ($(echo "$BODY" | tr '\n' ' '))" \
		test "$CODE:$BODY" = "200:0"
done
stop_cgi_backend

# With --cgi-argv: the words, but never an option.
argv_flag() {
	local q
	get args.sh 'git+log%2bx'
	check "argv, --cgi-argv: ?git+log%2bx gives git and log+x ($(echo "$BODY" | tr '\n' ' '))" \
		test "$CODE:$BODY" = "200:$(printf '2\n[git]\n[log+x]')"
	for q in --help -s 'a+-s' '%2ds' '-d+allow_url_include%3D1' '%2D%2Dscan-tree%3D/etc' 'log+--scan-tree%3D/etc'; do
		get args.sh "$q"
		check "argv, --cgi-argv: ?$q (a word that is an option) gives no arguments at all ($(echo "$BODY" | tr '\n' ' '))" \
			test "$CODE:$BODY" = "200:0"
	done
}
CGI_EVFCGID_FLAGS=(--cgi-argv)
if start_evfcgid_cgi "$CGIBIN"; then
	argv_flag
else
	not_ok "evfcgid --cgi --cgi-argv starts"
fi
CGI_EVFCGID_FLAGS=()
stop_cgi_backend

# --- 5. Checked and run as one. ----------------------------------------
# With the one slot held, a request for swap.sh (a program inside the
# root) waits in the queue; meanwhile swap.sh becomes a symlink to a
# program outside the root; then the slot is freed.  What runs is what
# is checked when it runs: refused, and the outside program never runs.
mkdir -p "$T/elsewhere" "$T/hold"
printf '#!/bin/sh\n: >"%s"\nprintf "Content-Type: text/plain\\r\\n\\r\\noutside ran\\n"\n' \
	"$T/elsewhere/ran" >"$T/elsewhere/evil.sh"
chmod 755 "$T/elsewhere/evil.sh"
cp -p "$CGIBIN/hello.sh" "$CGIBIN/swap.sh"
CGI_EVFCGID_FLAGS=(--cgi-max 1)
if start_evfcgid_cgi "$CGIBIN"; then
	(get hold.sh "$T/hold"; cp "$RESP" "$T/hold.resp") &
	holder=$!
	wait_file "$T/hold/started" 10 || echo "# hold.sh did not start" >&2
	(get swap.sh ""; cp "$RESP" "$T/swap.resp"; echo "$CODE" >"$T/swap.code") &
	queued=$!
	sleep 1
	new_log_lines >/dev/null
	ln -s "$T/elsewhere/evil.sh" "$CGIBIN/swap.sh.new" && mv -T "$CGIBIN/swap.sh.new" "$CGIBIN/swap.sh"
	: >"$T/hold/go"
	wait "$holder" "$queued"
	lines=$(new_log_lines)
	code=$(cat "$T/swap.code" 2>/dev/null)
	check "swap while queued: hold.sh held the slot and answered" grep -q '^held' "$T/hold.resp"
	check "swap while queued: swap.sh, now a symlink out of the root, refused ($code: $(sed '1,/^\r*$/d' "$T/swap.resp" | head -c 40))" \
		eval '[ "$code" = 403 ] && ! grep -q "outside ran" "$T/swap.resp"'
	check "swap while queued: the program outside the root never ran" test ! -e "$T/elsewhere/ran"
	check "swap while queued: refused when its turn came, logged ($(echo "$lines" | grep swap.sh | head -n 1 | cut -c1-140))" \
		eval 'echo "$lines" | grep -q "swap\.sh: refused: outside the CGI root"'
else
	not_ok "evfcgid --cgi --cgi-max 1 starts"
fi
CGI_EVFCGID_FLAGS=()
stop_cgi_backend

# The same race without a queue: swap.sh flips between the program and
# the symlink out of the root as fast as rename() goes, while it is
# asked for 300 times (the review's old code lost on the 5th).
rm -f "$CGIBIN/swap.sh" "$T/elsewhere/ran"
cp -p "$CGIBIN/hello.sh" "$T/swap.real"
ln -s "$T/elsewhere/evil.sh" "$T/swap.link"
start_evfcgid_cgi "$CGIBIN" || { not_ok "evfcgid --cgi starts"; finish; }
bash -c 'while :; do cp -p "$1" "$2.f" && mv -T "$2.f" "$2"; ln -sfn "$3" "$2.l" && mv -T "$2.l" "$2"; done' \
	flip "$T/swap.real" "$CGIBIN/swap.sh" "$T/elsewhere/evil.sh" &
flipper=$!
served=0 refused=0
for i in $(seq 300); do
	get swap.sh ""
	case $CODE in 200) served=$((served + 1)) ;; 403|404) refused=$((refused + 1)) ;; esac
	[ -e "$T/elsewhere/ran" ] && break
done
kill "$flipper"
wait "$flipper" 2>/dev/null
echo "# rename loop: $i requests, $served served by hello.sh, $refused refused"
check "rename loop: the program outside the root never ran ($i requests, $served served, $refused refused)" \
	test ! -e "$T/elsewhere/ran"
stop_cgi_backend
rm -f "$CGIBIN/swap.sh" "$CGIBIN"/swap.sh.?

# --- 6. One value per parameter: the last. ----------------------------
# nginx sends a name twice when a location sets it after `include
# fastcgi_params`; the last is meant, and PHP-FPM keeps it.  What the
# gateway checks and runs is the last, and the program's environment
# holds that one too (before: 400 "a parameter given twice").  Logged at
# debug only (-vv).  PATH_TRANSLATED, which the peer sends unchecked, is
# never passed on, and SCRIPT_FILENAME is always the path checked, also
# when the program was named by DOCUMENT_ROOT + SCRIPT_NAME.
CGI_EVFCGID_FLAGS=(-vv)
start_evfcgid_cgi "$CGIBIN" || { not_ok "evfcgid --cgi starts"; finish; }
CGI_EVFCGID_FLAGS=()
for nv in "SCRIPT_NAME=/x" REQUEST_METHOD=POST "QUERY_STRING=a=2" "REQUEST_URI=/y" \
	"PATH_INFO=/a PATH_INFO=/b" "CONTENT_LENGTH=0 CONTENT_LENGTH=0" \
	"REMOTE_USER=alice REMOTE_USER=root" "GATEWAY_INTERFACE=CGI/1.1"; do
	pname=${nv%%=*}
	last=${nv##* }
	new_log_lines >/dev/null
	# shellcheck disable=SC2086
	get env.sh "a=1" $nv
	lines=$(new_log_lines)
	check "duplicates: $pname twice: 200, the last in the environment ($CODE, $(grep "^$pname=" <<<"$BODY" | tr '\n' ' '))" \
		eval '[ "$CODE" = 200 ] && [ "$(grep "^$pname=" <<<"$BODY" | sort -u)" = "$last" ]'
	check "duplicates: $pname twice: logged at debug naming it ($(echo "$lines" | grep "more than once" | head -n 1 | cut -c1-120))" \
		eval 'echo "$lines" | grep -q "debug.*$pname given more than once: the last is used"'
done
# The program run is the last SCRIPT_FILENAME: outside the root, refused.
get env.sh "" "SCRIPT_FILENAME=/bin/sh"
check "duplicates: SCRIPT_FILENAME env.sh then /bin/sh: the last is checked, 403 ($CODE)" \
	test "$CODE" = 403
get hello.sh "" "SCRIPT_FILENAME=$CGIBIN/env.sh"
check "duplicates: SCRIPT_FILENAME hello.sh then env.sh: env.sh ran and says so ($CODE, $(grep '^SCRIPT_FILENAME=' <<<"$BODY"))" \
	eval '[ "$CODE" = 200 ] && [ "$(grep "^SCRIPT_FILENAME=" <<<"$BODY" | sort -u)" = "SCRIPT_FILENAME=$CGIBIN/env.sh" ]'
get env.sh "" "DOCUMENT_ROOT=/"
check "duplicates: DOCUMENT_ROOT twice, SCRIPT_FILENAME once: served, the last DOCUMENT_ROOT seen ($CODE)" \
	eval '[ "$CODE" = 200 ] && grep -qx "DOCUMENT_ROOT=/" <<<"$BODY"'
get env.sh "" HTTP_COOKIE=a=1 HTTP_COOKIE=b=2 HTTP_X_A=1 HTTP_X_A=2
check "duplicates: a header twice (HTTP_COOKIE, HTTP_X_A): served, its copies joined ($CODE, $(grep -E '^HTTP_(COOKIE|X_A)=' <<<"$BODY" | tr '\n' ' '))" \
	eval '[ "$CODE" = 200 ] && grep -qx "HTTP_COOKIE=a=1; b=2" <<<"$BODY" && grep -qx "HTTP_X_A=1, 2" <<<"$BODY"'
get env.sh "" "script_filename=/bin/sh"
check "duplicates: script_filename is another name: served, SCRIPT_FILENAME as checked ($CODE)" \
	eval '[ "$CODE" = 200 ] && grep -qx "SCRIPT_FILENAME=$CGIBIN/env.sh" <<<"$BODY"'
# No SCRIPT_FILENAME: DOCUMENT_ROOT + SCRIPT_NAME is checked and run, and
# the program is told that path; PATH_TRANSLATED (here a file outside the
# root, which php-cgi would have run) is not passed on.
raw "DOCUMENT_ROOT=$WWW" "SCRIPT_NAME=/cgi-bin/env.sh" "REQUEST_METHOD=GET" \
	"PATH_INFO=/x" "PATH_TRANSLATED=/etc/passwd" "QUERY_STRING="
check "no SCRIPT_FILENAME: SCRIPT_FILENAME is the path checked ($CODE, $(grep '^SCRIPT_FILENAME=' <<<"$BODY"))" \
	eval '[ "$CODE" = 200 ] && grep -qx "SCRIPT_FILENAME=$WWW/cgi-bin/env.sh" <<<"$BODY"'
check "PATH_TRANSLATED is not passed on ($(grep '^PATH_TRANSLATED=' <<<"$BODY"))" \
	eval '! grep -q "^PATH_TRANSLATED=" <<<"$BODY"'
get env.sh "" "PATH_TRANSLATED=/etc/passwd"
check "PATH_TRANSLATED is not passed on with SCRIPT_FILENAME either ($(grep '^PATH_TRANSLATED=' <<<"$BODY"))" \
	eval '[ "$CODE" = 200 ] && ! grep -q "^PATH_TRANSLATED=" <<<"$BODY"'
stop_cgi_backend

finish
