#!/usr/bin/python3
# The CGI/1.1 environment (RFC 3875 4.1), in Python: the same lines as
# env.sh (NAME=value or "NAME unset", CWD=), then FDS= the descriptors
# open in the script besides the one listing them, FDn= the file and
# access mode of each beyond 2, ARGV0= the script's name as Python got
# it, then the whole environment after "-- environ".
import fcntl
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
# listdir(fd) lists through a dup of fd: both are closed before the
# descriptors listed are looked at again, so only the inherited remain.
fd = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
names = [int(n) for n in os.listdir(fd)]
os.close(fd)


def is_open(n):
    try:
        os.fstat(n)
        return True
    except OSError:
        return False


fds = sorted(n for n in names if is_open(n))
out.append("FDS=%s\n" % ",".join(str(n) for n in fds))
# What each beyond 2 is: FDn=its file, then its access mode.
for n in fds:
    if n > 2:
        acc = fcntl.fcntl(n, fcntl.F_GETFL) & os.O_ACCMODE
        out.append("FD%d=%s %s\n" % (n, os.readlink("/proc/self/fd/%d" % n),
                                      {os.O_RDONLY: "r", os.O_WRONLY: "w"}.get(acc, "rw")))
out.append("ARGV0=%s\n" % sys.argv[0])
out.append("-- environ\n")
for name in sorted(os.environ):
    out.append("%s=%s\n" % (name, os.environ[name]))
sys.stdout.write("".join(out))
