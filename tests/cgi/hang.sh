#!/bin/sh
# A script that hangs: its header and its pid (so a test can end it), then
# it sleeps for a day (exec: the pid is the sleeping process).  The
# gateway's time limit is what should end it.
printf 'Content-Type: text/plain\r\nX-Pid: %s\r\n\r\npid %s\n' "$$" "$$"
exec sleep 86400
