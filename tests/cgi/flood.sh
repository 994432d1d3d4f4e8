#!/bin/sh
# Answers, closes its stdout, then writes stderr without end, as fast as
# it can: it must cost the gateway next to nothing, and end.
printf 'Content-Type: text/plain\r\n\r\nflood %s\n' "$$"
exec >/dev/null
exec yes 'a stderr flood after the answer' >&2
