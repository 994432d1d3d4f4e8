#!/bin/sh
# The command line (RFC 3875 4.4): how many arguments, then each in [].
printf 'Content-Type: text/plain\r\n\r\n%s\n' "$#"
for a; do printf '[%s]\n' "$a"; done
