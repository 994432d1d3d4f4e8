#!/bin/sh
# Leaves a child running in the background (its output elsewhere) and
# exits; the body is both pids.  What a program leaves in its process
# group is ended with it.
sleep 1000 >/dev/null 2>&1 </dev/null &
printf 'Content-Type: text/plain\r\n\r\n%s %s\n' "$$" "$!"
