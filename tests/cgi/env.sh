#!/bin/sh
# The CGI/1.1 environment (RFC 3875 4.1), in shell: each meta-variable of
# 4.1 as NAME=value or "NAME unset", then the working directory, then the
# whole environment after a "-- environ" line, so a test can look for
# what must be there and for what must not (the daemon's own variables).
printf 'Content-Type: text/plain\r\n\r\n'
for v in AUTH_TYPE CONTENT_LENGTH CONTENT_TYPE GATEWAY_INTERFACE PATH_INFO \
    PATH_TRANSLATED QUERY_STRING REMOTE_ADDR REMOTE_HOST REMOTE_IDENT \
    REMOTE_USER REQUEST_METHOD SCRIPT_NAME SERVER_NAME SERVER_PORT \
    SERVER_PROTOCOL SERVER_SOFTWARE; do
	if printenv "$v" >/dev/null; then
		printf '%s=%s\n' "$v" "$(printenv "$v")"
	else
		printf '%s unset\n' "$v"
	fi
done
printf 'CWD=%s\n' "$(pwd)"
printf -- '-- environ\n'
env
