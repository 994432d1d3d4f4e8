#!/bin/sh
# A script that crashes before its header: it kills itself with SIGSEGV
# having written nothing.
kill -SEGV $$
