#!/bin/sh
# A "local return_to": the query's to= copied into Location as it came
# (not decoded), the way an application sends a visitor back where it
# says it came from.  No Status: a local redirect (RFC 3875 6.2.2).
printf 'Location: %s\r\n\r\n' "${QUERY_STRING#to=}"
