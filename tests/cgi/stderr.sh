#!/bin/sh
# A script that floods stderr: 100000 lines "stderr flood N" (2 MB), then
# its header and one body line.
seq 1 100000 | sed 's/^/stderr flood /' >&2
printf 'Content-Type: text/plain\r\n\r\nstderr flood done\n'
