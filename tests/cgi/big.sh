#!/bin/sh
# A large output: QUERY_STRING bytes (32 MiB when empty) of a 64-byte line
# repeated, the demo body of tests/lib.sh's pattern(), so the test can
# make the same bytes and compare checksums.
n=${QUERY_STRING:-33554432}
printf 'Content-Type: application/octet-stream\r\n\r\n'
yes 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.' | head -c "$n"
