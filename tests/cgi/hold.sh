#!/bin/sh
# Holds its slot: touches DIR/started (DIR: its query), then waits until
# DIR/go exists (30 s at most) and answers.  A test fills --cgi-max with
# it to keep the next request waiting in the queue.
: >"$QUERY_STRING/started"
i=0
while [ ! -e "$QUERY_STRING/go" ] && [ "$i" -lt 600 ]; do
	sleep 0.05
	i=$((i + 1))
done
printf 'Content-Type: text/plain\r\n\r\nheld\n'
