#!/usr/bin/python3
# A crash in Python: half a header line written and flushed, then SIGSEGV.
import os
import signal
import sys

sys.stdout.write("Content-Ty")
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGSEGV)
