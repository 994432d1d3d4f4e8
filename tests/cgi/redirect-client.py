#!/usr/bin/python3
# A client redirect response (RFC 3875 6.2.3): only a Location header with
# an absolute URI; the answer is a 302 to it.
import sys

sys.stdout.write("Location: http://example.invalid/moved?x=1\r\n\r\n")
