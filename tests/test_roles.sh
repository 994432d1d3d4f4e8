#!/bin/bash
# The FastCGI Authorizer and Filter roles against real processes.
#   - Raw protocol, a perl client against evfcgid's demo: a filter request
#     (STDIN and a 70000-byte DATA stream) answered with its DATA byte for
#     byte; DATA past --max-body (413) and against FCGI_DATA_LENGTH (400);
#     DATA before the end of PARAMS (the connection closed, logged); DATA
#     in a Responder request ignored; an Authorizer, which the demo has no
#     route for, refused with FCGI_UNKNOWN_ROLE; and by evfcgid --cgi.
#   - lighttpd's "mode" => "authorizer" with examples/authorizer in front
#     of a static file: allowed, 200 and the file; denied, 401 with the
#     authorizer's WWW-Authenticate and body.
#   - Apache httpd's mod_authnz_fcgi with the same authorizer in front of
#     mod_proxy_fcgi to the same process as a Responder, which shows the
#     AUTH_USER the authorizer's Variable-AUTH_USER became.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
source "$(dirname "$0")/frontends.sh"
AUTHORIZER=$TOP/examples/authorizer

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$AUTHORIZER" ] || { not_ok "examples/authorizer is built (make)"; finish; }

# A FastCGI client: SCENARIO's records on one connection, then reads to
# the end: prints "ID PROTOCOL_STATUS" per END_REQUEST and "eof" at the
# end; each id's STDOUT goes to DIR/out.ID.
ROLES_PL='
use strict; use warnings; use IO::Socket::INET;
my ($port, $scn, $dir) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port) or die "$!";
binmode $s; $s->autoflush(1);
sub rec { my ($t, $id, $c) = @_; my $pad = (8 - length($c) % 8) % 8;
	pack("CCnnCC", 1, $t, $id, length $c, $pad, 0) . $c . ("\0" x $pad) }
sub stream { my ($t, $id, $c) = @_; my $o = "";
	for (my $i = 0; $i < length $c; $i += 65535) { $o .= rec($t, $id, substr($c, $i, 65535)) }
	$o . rec($t, $id, "") }
sub nv { my %p = @_; join "", map { my ($k, $v) = ($_, $p{$_});
	(length $v < 128 ? pack("CC", length $k, length $v) : pack("CN", length $k, 0x80000000 | length $v)) . $k . $v } sort keys %p }
sub begin { my ($id, $role) = @_; rec(1, $id, pack("nCx5", $role, 1)) }
sub params { my ($id, %p) = @_; rec(4, $id, nv(%p)) . rec(4, $id, "") }
sub filter { my ($id, $stdin, $data, %p) = @_; begin($id, 3) .
	params($id, REQUEST_METHOD => "GET", REQUEST_URI => "/page.html",
	    FCGI_DATA_LAST_MOD => "1700000000", %p) .
	stream(5, $id, $stdin) . stream(8, $id, $data) }
my $data = join "", map { chr(($_ * 7) % 251) } 0 .. 69999;
my $out = "";
if ($scn eq "filter") {
	$out = filter(1, "abc", $data, FCGI_DATA_LENGTH => length $data);
} elsif ($scn eq "limits") {
	$out = filter(1, "", "x" x 150000) . filter(2, "", "x" x 5, FCGI_DATA_LENGTH => "10") .
	    filter(3, "", "x", FCGI_DATA_LENGTH => "1e3") . filter(4, "", "fine");
} elsif ($scn eq "early") {
	$out = begin(1, 3) . rec(4, 1, nv(REQUEST_URI => "/x")) . rec(8, 1, "too early");
} elsif ($scn eq "responder") {
	$out = begin(1, 1) . params(1, REQUEST_METHOD => "POST", REQUEST_URI => "/echo",
	    CONTENT_LENGTH => 5) . stream(8, 1, "not for a responder") . stream(5, 1, "hello") .
	    begin(2, 2) . params(2, REQUEST_URI => "/x");
}
print $s $out;
my $want = () = $out =~ /\x01\x01..\x00\x08\x00\x00/gs;
my ($buf, $ends, %o) = ("", 0);
while ($ends < $want) {
	my $n = sysread($s, $buf, 65536, length $buf);
	last if !$n;
	while (length $buf >= 8) {
		my ($v, $t, $id, $len, $pad) = unpack("CCnnC", $buf);
		last if length $buf < 8 + $len + $pad;
		my $c = substr($buf, 8, $len);
		$buf = substr($buf, 8 + $len + $pad);
		$o{$id} .= $c if $t == 6;
		if ($t == 3) {
			print "$id ", unpack("x4C", $c), "\n";
			$ends++;
			open(my $f, ">", "$dir/out.$id") or die; binmode $f; print $f $o{$id} // ""; close $f;
		}
	}
}
print "eof\n" if $ends < $want;
open(my $f, ">", "$dir/data") or die; binmode $f; print $f $data; close $f;
'

# roles_client SCENARIO: runs it against evfcgid; its lines in $T/roles.SCENARIO.
roles_client() {
	mkdir -p "$T/$1"
	timeout 20 perl -e "$ROLES_PL" "$EVFCGID_PORT" "$1" "$T/$1" >"$T/roles.$1" 2>&1
}

start_evfcgid --max-body 100k
roles_client filter
check "filter: END_REQUEST complete" grep -qx "1 0" "$T/roles.filter"
body_of <"$T/filter/out.1" >"$T/filter/body"
check "filter: the demo answers the 70000-byte DATA stream byte for byte" \
	cmp -s "$T/filter/body" "$T/filter/data"
check "filter: and saw the 3 bytes of STDIN apart" grep -q "^X-Stdin-Length: 3" "$T/filter/out.1"

roles_client limits
check "filter: 4 requests on one kept connection, 4 answers" \
	test "$(grep -c '^[1-4] 0$' "$T/roles.limits")" -eq 4
check "filter: DATA past --max-body 100k is answered 413" grep -q "^Status: 413" "$T/limits/out.1"
check "filter: DATA short of FCGI_DATA_LENGTH is answered 400" grep -q "^Status: 400" "$T/limits/out.2"
check "filter: FCGI_DATA_LENGTH not a number is answered 400" grep -q "^Status: 400" "$T/limits/out.3"
check "filter: then a good one on the same connection, 200" grep -q "^Status: 200" "$T/limits/out.4"

roles_client early
check "filter: DATA before the end of PARAMS closes the connection, unanswered" \
	test "$(cat "$T/roles.early")" = eof
check "... with a logged reason" wait_for_line "$EVFCGID_LOG" "DATA before the end of PARAMS" 5

roles_client responder
check "responder: DATA in a Responder request is ignored, /echo answers its body" \
	eval 'grep -qx "1 0" "$T/roles.responder" && [ "$(body_of <"$T/responder/out.1")" = hello ]'
check "authorizer: the demo has no authorizer route: FCGI_UNKNOWN_ROLE (3)" \
	grep -qx "2 3" "$T/roles.responder"
kill -0 "$EVFCGID_PID" 2>/dev/null
check "evfcgid still runs" test $? -eq 0

# --cgi serves the Responder role alone (docs/cgi.md).
start_evfcgid --cgi --cgi-root "$T"
roles_client responder
check "--cgi: an Authorizer request gets FCGI_UNKNOWN_ROLE (3)" grep -qx "2 3" "$T/roles.responder"

# --- The authorizer behind real front ends.
APORT=$(freeport)
spawn "$AUTHORIZER" --listen "127.0.0.1:$APORT" 2>"$T/authorizer.log"
wait_port "$APORT"
TOKEN="Authorization: Bearer open-sesame"

# fe_auth_checks NAME URL OKBODY: allowed with the token (200, OKBODY),
# denied without it or with another (401, the header and the body).
fe_auth_checks() {
	local name=$1 url=$2 want=$3 code
	code=$(curl -s -o "$T/$name.ok" -w '%{http_code}' -H "$TOKEN" "$url")
	check "$name: allowed with the token: 200 ($code)" test "$code" = 200
	check "$name: ... and the page behind it" cmp -s "$T/$name.ok" "$want"
	for h in "X-None: 1" "Authorization: Bearer open-sesame!"; do
		code=$(curl -s -D "$T/$name.hdr" -o "$T/$name.no" -w '%{http_code}' -H "$h" "$url")
		check "$name: denied ($h): 401 ($code)" test "$code" = 401
		check "$name: ... with the authorizer's WWW-Authenticate" \
			grep -qi '^WWW-Authenticate: Bearer realm="evfcgid"' "$T/$name.hdr"
		check "$name: ... and its body" grep -qx "This needs a bearer token." "$T/$name.no"
	done
}

# lighttpd: the authorizer in front of a static file.
if [ -x "$LIGHTTPD" ]; then
	L=$T/lighttpd-auth LPORT=$(freeport)
	mkdir -p "$L/www"
	echo "the guarded file" >"$L/www/file.txt"
	echo "$LPORT" >"$L/port"
	cat >"$L/lighttpd.conf" <<EOF
server.modules = ( "mod_fastcgi" )
server.bind = "127.0.0.1"
server.port = $LPORT
server.document-root = "$L/www"
server.pid-file = "$L/lighttpd.pid"
server.errorlog = "$L/error.log"
fastcgi.server = ( "/" => ((
	"host" => "127.0.0.1", "port" => $APORT,
	"mode" => "authorizer", "check-local" => "disable",
)))
EOF
	if start_lighttpd "$L"; then
		fe_auth_checks lighttpd "http://127.0.0.1:$LPORT/file.txt" "$L/www/file.txt"
	else
		not_ok "lighttpd starts in authorizer mode"
	fi
else
	not_ok "lighttpd is installed"
fi

# Apache: mod_authnz_fcgi's generic authorizer (authnz, check_user_id:
# Variable-AUTH_USER becomes the user), in front of mod_proxy_fcgi to the
# same process as a Responder.
if [ -x "$APACHE" ]; then
	A=$T/apache-auth PPORT=$(freeport) M=/usr/lib/apache2/modules
	mkdir -p "$A/run"
	echo "$PPORT" >"$A/port"
	echo "AUTH_USER=demo" >"$T/apache.want"
	cat >"$A/apache.conf" <<EOF
LoadModule mpm_event_module $M/mod_mpm_event.so
LoadModule authn_core_module $M/mod_authn_core.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule authnz_fcgi_module $M/mod_authnz_fcgi.so
LoadModule proxy_module $M/mod_proxy.so
LoadModule proxy_fcgi_module $M/mod_proxy_fcgi.so
ServerRoot "/etc/apache2"
ServerName localhost
User www-data
Group www-data
PidFile $A/apache.pid
DefaultRuntimeDir $A/run
ErrorLog $A/error.log
LogLevel warn
Listen 127.0.0.1:$PPORT
AuthnzFcgiDefineProvider authnz evfcgid_auth fcgi://127.0.0.1:$APORT/
<Location "/">
	CGIPassAuth On
	AuthnzFcgiCheckAuthnProvider evfcgid_auth Authoritative On \\
		RequireBasicAuth Off UserExpr "%{reqenv:AUTH_USER}"
	Require evfcgid_auth
</Location>
ProxyPass "/" "fcgi://127.0.0.1:$APORT/"
EOF
	if start_apache "$A"; then
		# mod_authnz_fcgi keeps only the body bytes that come in the
		# STDOUT record ending the header block (docs/frontends.md).
		fe_auth_checks apache "http://127.0.0.1:$PPORT/page" "$T/apache.want"
	else
		not_ok "apache starts with mod_authnz_fcgi"
	fi
else
	not_ok "apache2 is installed"
fi
finish
