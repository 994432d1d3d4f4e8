#!/usr/bin/python3
# Slow output: the header at once, then "line N" every 200 ms, ten lines
# (QUERY_STRING lines when given), each flushed as it is written.
import os
import sys
import time

n = int(os.environ.get("QUERY_STRING") or "10")
sys.stdout.write("Content-Type: text/plain\r\n\r\n")
sys.stdout.flush()
for i in range(1, n + 1):
    time.sleep(0.2)
    sys.stdout.write("line %d\n" % i)
    sys.stdout.flush()
