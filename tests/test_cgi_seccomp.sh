#!/bin/bash
# evfcgid --cgi where openat2 and faccessat2 do not answer as the kernel
# would (issue 27): under a seccomp filter that answers them EPERM (older
# container runtimes' default profiles answer EPERM to system calls they
# do not know), EACCES, or ENOSYS (a kernel without them), the gateway
# falls back to openat + O_NOFOLLOW + the descriptor's /proc link and to
# the mode bits, and still refuses what it must.  Before: every program
# 403 under EPERM or EACCES.  The filter is tests/seccomp_eperm.c, built
# here with cc (no libseccomp).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
command -v cc >/dev/null || { not_ok "cc is installed"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }
cgi_backend_usable evfcgid || { not_ok "evfcgid --cgi: $CGI_SKIP"; finish; }
[ "$(uname -m)" = x86_64 ] || { echo "# skipped: the filter knows x86-64's numbers only"; finish; }
cc -O -o "$T/seccomp_eperm" "$TOP/tests/seccomp_eperm.c" 2>"$T/cc.log" ||
	{ not_ok "tests/seccomp_eperm.c builds ($(head -n 3 "$T/cc.log"))"; finish; }

WWW=$T/www
cgi_www "$WWW" || { not_ok "the CGI scripts are copied to $WWW"; finish; }

# The filter works: openat2 (437) answers EPERM under it.
out=$("$T/seccomp_eperm" EPERM perl -e 'my $p = "/"; syscall(437, -100, $p, 0, 0) < 0 or print "ok"; print $!{EPERM} ? "EPERM" : $!+0' 2>&1)
check "the filter answers openat2 with EPERM ($out)" test "$out" = EPERM

REAL=$CGI_EVFCGID
for e in EPERM EACCES ENOSYS; do
	printf '#!/bin/sh\nexec %q %s %q "$@"\n' "$T/seccomp_eperm" "$e" "$REAL" >"$T/evfcgid.$e"
	chmod +x "$T/evfcgid.$e"
	CGI_EVFCGID=$T/evfcgid.$e
	start_evfcgid_cgi "$WWW/cgi-bin" || { not_ok "$e: evfcgid --cgi starts under the filter"; continue; }
	start_cgi_nginx "$CGI_ADDR" "$WWW" || { not_ok "$e: nginx starts"; stop_cgi_backend; continue; }
	code=$(curl -s -o "$T/body" -w '%{http_code}' "$CGI_URL/cgi-bin/hello.sh")
	check "$e: hello.sh runs ($code, $(head -c 40 "$T/body"))" \
		eval '[ "$code" = 200 ] && grep -q "hello from cgi" "$T/body"'
	code=$(curl -s -o /dev/null -w '%{http_code}' "$CGI_URL/cgi-bin/env.py/x?q")
	check "$e: env.py (a #! script, read by descriptor) runs ($code)" test "$code" = 200
	for s in noexec.sh outside.sh adir; do
		code=$(curl -s -o /dev/null -w '%{http_code}' "$CGI_URL/cgi-bin/$s")
		check "$e: $s still refused with 403 ($code)" test "$code" = 403
	done
	code=$(curl -s -o /dev/null -w '%{http_code}' "$CGI_URL/cgi-bin/nosuch.sh")
	check "$e: nosuch.sh 404 ($code)" test "$code" = 404
	stop_cgi_nginx
	stop_cgi_backend
done
CGI_EVFCGID=$REAL

finish
