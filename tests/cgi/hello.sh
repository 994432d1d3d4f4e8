#!/bin/sh
# The trivial script: one line.
printf 'Content-Type: text/plain\r\n\r\nhello from cgi\n'
