#!/bin/sh
# A script with no header: a body line and exit 0, no header block.
echo 'no header here, just a body'
