#!/usr/bin/python3
# The CGI/1.1 environment (RFC 3875 4.1), in Python: the same lines as
# env.sh (NAME=value or "NAME unset", CWD=), then FDS= the descriptors
# open in the script besides the one listing them, then the whole
# environment after "-- environ".
import os
import sys

NAMES = ("AUTH_TYPE CONTENT_LENGTH CONTENT_TYPE GATEWAY_INTERFACE PATH_INFO "
         "PATH_TRANSLATED QUERY_STRING REMOTE_ADDR REMOTE_HOST REMOTE_IDENT "
         "REMOTE_USER REQUEST_METHOD SCRIPT_NAME SERVER_NAME SERVER_PORT "
         "SERVER_PROTOCOL SERVER_SOFTWARE").split()

out = ["Content-Type: text/plain\r\n\r\n"]
for name in NAMES:
    if name in os.environ:
        out.append("%s=%s\n" % (name, os.environ[name]))
    else:
        out.append("%s unset\n" % name)
out.append("CWD=%s\n" % os.getcwd())
fd = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
fds = sorted(int(n) for n in os.listdir(fd) if int(n) != fd)
os.close(fd)
out.append("FDS=%s\n" % ",".join(str(n) for n in fds))
out.append("-- environ\n")
for name in sorted(os.environ):
    out.append("%s=%s\n" % (name, os.environ[name]))
sys.stdout.write("".join(out))
