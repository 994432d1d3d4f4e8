#!/bin/sh
# Writes QUERY_STRING bytes (8 MiB when empty) of the demo pattern and
# exits at once: to a slow client most of it is still queued (pipe,
# gateway, front end) when the script is gone.  X-Pid names it, to check
# it was reaped.
n=${QUERY_STRING:-8388608}
printf 'Content-Type: application/octet-stream\r\nX-Pid: %s\r\n\r\n' "$$"
yes 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.' | head -c "$n"
