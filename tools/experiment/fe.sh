#!/bin/bash
# tools/experiment/fe.sh: a front end's configuration for the experiment,
# written by the test suite's own functions (tests/frontends.sh,
# tests/cgi.sh) so that the experiment runs the examples the tests check.
#
#   fe.sh FRONTEND DIR PORT BACKEND [VARIANT...]
#       FRONTEND as frontend_start takes it (nginx, nginx-buffered,
#       lighttpd, nginx-keepalive=0 ...)
#   fe.sh nginx-cgi DIR PORT BACKEND WWW
#       nginx with the CGI location of tests/cgi.sh, root WWW
#
# Writes the configuration in DIR and prints the command that runs it in
# the foreground, one argument a line; exits non-zero, saying why, if it
# cannot.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
source "$TOP/tests/lib.sh"
source "$TOP/tests/frontends.sh"
source "$TOP/tests/cgi.sh"

name=$1 dir=$2 port=$3 backend=$4
shift 4
mkdir -p "$dir" || exit 1
if [ "$name" = nginx-cgi ]; then
	nginx_cgi_conf "$dir" "$port" "$backend" "$1" || exit 1
	kind=nginx
else
	IFS=- read -ra parts <<<"$name"
	variants=()
	for v in "${parts[@]:1}"; do
		case $v in
		stream[012]) variants+=("stream=${v#stream}") ;;
		*) variants+=("$v") ;;
		esac
	done
	variants+=("$@")
	kind=${parts[0]}
	case $kind in nginx | lighttpd) ;; *) echo "fe.sh: unknown front end '$name'" >&2; exit 2 ;; esac
	"${kind}_conf" "$dir" "$port" "$backend" "${variants[@]}" || exit 1
fi
case $kind in
nginx) printf '%s\n' "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" ;;
lighttpd) printf '%s\n' "$LIGHTTPD" -D -f "$dir/lighttpd.conf" ;;
esac
