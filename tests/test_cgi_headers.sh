#!/bin/bash
# What a CGI program sees of a client's header sent more than once
# (issue 37, item 7), through nginx (the CGI locations of tests/cgi.sh),
# which passes each copy as an HTTP_* param of its own: the copies
# joined in order, Cookie with "; " (RFC 6265 5.4), the others with ", "
# (RFC 9110 5.3); a header sent once is as it came.  Before: the program
# saw the last copy only (fcgiwrap's sees both, and getenv gives the
# first).  Another evfcgid: CGI_EVFCGID=/path/to/evfcgid.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }
cgi_backend_usable evfcgid || { not_ok "evfcgid --cgi: $CGI_SKIP"; finish; }

WWW=$T/www
cgi_www "$WWW" || { not_ok "the CGI scripts are copied to $WWW"; finish; }
start_cgi_backend evfcgid "$WWW/cgi-bin" && start_cgi_nginx "$CGI_ADDR" "$WWW" ||
	{ not_ok "evfcgid --cgi and nginx start"; finish; }

out=$(curl -s --max-time 10 -H 'Cookie: a=1' -H 'Cookie: b=2; c=3' \
	-H 'X-Thing: one' -H 'X-Thing: two, three' -H 'X-Once: alone' \
	-H 'Accept: text/html' -H 'Accept: */*' "$CGI_URL/cgi-bin/env.sh")
val() { sed -n "s/^$1=//p" <<<"$out" | head -1; }
count() { grep -c "^$1=" <<<"$out"; }
check "Cookie twice: joined with '; ' ($(val HTTP_COOKIE))" \
	test "$(val HTTP_COOKIE)" = "a=1; b=2; c=3"
check "X-Thing twice: joined with ', ' ($(val HTTP_X_THING))" \
	test "$(val HTTP_X_THING)" = "one, two, three"
check "Accept twice: joined with ', ' ($(val HTTP_ACCEPT))" \
	test "$(val HTTP_ACCEPT)" = "text/html, */*"
check "X-Once: as it came ($(val HTTP_X_ONCE))" test "$(val HTTP_X_ONCE)" = alone
check "one variable a name (HTTP_COOKIE $(count HTTP_COOKIE), HTTP_X_THING $(count HTTP_X_THING))" \
	eval '[ "$(count HTTP_COOKIE)" = 1 ] && [ "$(count HTTP_X_THING)" = 1 ]'
stop_cgi_nginx
stop_cgi_backend
finish
