#!/bin/sh
# Answers, closes its stdout (the response is complete) and sleeps on: a
# program that outlives its request.  The gateway ends it after the
# grace, and its --cgi-max slot is free once it has been reaped.
printf 'Content-Type: text/plain\r\n\r\nlinger %s\n' "$$"
exec >/dev/null
sleep 1000
