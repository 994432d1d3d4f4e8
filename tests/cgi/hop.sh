#!/bin/sh
# A chain of local redirects: with QUERY_STRING n=N (N > 0), a local
# redirect to itself with n=N-1, after which it closes its stdout and
# sleeps on (each hop outlives its part); with n=0 it answers its pid.
n=${QUERY_STRING#n=}
case $n in ''|*[!0-9]*) n=0 ;; esac
if [ "$n" -gt 0 ]; then
	printf 'Location: /cgi-bin/hop.sh?n=%s\r\n\r\n' $((n - 1))
	exec >/dev/null
	sleep 1000
	exit 0
fi
printf 'Content-Type: text/plain\r\n\r\nhop %s\n' "$$"
