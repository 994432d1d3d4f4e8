#!/bin/sh
# Output that never ends: the header and its pid (so a test can watch
# it), then a line every 200 ms for ever.  Only a client that goes away
# (the gateway's next write fails) or a time limit ends it.
printf 'Content-Type: text/plain\r\nX-Pid: %s\r\n\r\n' "$$"
while :; do
	echo "pid $$"
	sleep 0.2
done
