#!/bin/sh
# Echoes the request body as it reads it: the header first, then
# CONTENT_LENGTH bytes of stdin copied to stdout while they arrive, so
# its output fills the pipe long before its input is all read.
printf 'Content-Type: application/octet-stream\r\n\r\n'
exec head -c "${CONTENT_LENGTH:-0}"
