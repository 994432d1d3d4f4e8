#!/bin/sh
# Status: handling (RFC 3875 6.3.3): "404 Not Here" with a document.
printf 'Status: 404 Not Here\r\nContent-Type: text/plain\r\n\r\nnot here\n'
