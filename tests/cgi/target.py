#!/usr/bin/python3
# The local redirect's target: says which script ran and with which query.
import os
import sys

sys.stdout.write("Content-Type: text/plain\r\n\r\ntarget SCRIPT_NAME=%s QUERY_STRING=%s\n"
                 % (os.environ.get("SCRIPT_NAME", ""), os.environ.get("QUERY_STRING", "")))
