#!/bin/bash
# The CGI gateway is an application of the library like any other (issue
# 35, item 6): src/cgi includes no internal header of the engine but
# log.h (evfcgi.h is the public API), and its objects call nothing of the
# engine's but evfcgi_* and the log (log_*).  Before: request.h for the
# status text, %-decoding and a header with a reason phrase, budget.h
# for the held output's cap.
source "$(dirname "$0")/lib.sh"

command -v nm >/dev/null || { not_ok "nm is installed (binutils)"; finish; }
cd "$TOP" || exit 1
inc=$(grep -ho '#include "[a-z_]*\.h"' src/cgi/*.c src/cgi/*.h | sort -u |
	sed 's/#include "//; s/"//' | while read -r h; do
		[ -e "src/engine/$h" ] && [ "$h" != evfcgi.h ] && [ "$h" != log.h ] && echo "$h"
	done | tr '\n' ' ')
check "src/cgi includes of the engine only evfcgi.h and log.h (${inc:-none else})" test -z "$inc"
objs=$(ls src/cgi/*.o 2>/dev/null)
if [ -z "$objs" ] || ! ls src/engine/*.o >/dev/null 2>&1; then
	not_ok "src/cgi and src/engine are built (make)"
	finish
fi
# shellcheck disable=SC2086
nm --defined-only -P src/engine/*.o | awk '$2 ~ /^[TDBR]$/ { print $1 }' | sort -u >"$T/engine"
# shellcheck disable=SC2086
nm -u -P $objs | awk '{ print $1 }' | sort -u >"$T/cgi"
inner=$(comm -12 "$T/engine" "$T/cgi" | grep -v -e '^evfcgi_' -e '^log_' | tr '\n' ' ')
check "src/cgi calls of the engine only evfcgi_* and log_* (${inner:-none else})" test -z "$inner"
finish
