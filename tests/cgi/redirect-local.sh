#!/bin/sh
# A local redirect response (RFC 3875 6.2.2): only a Location header with
# a local path and query, no body; the server should answer as for a
# request to /cgi-bin/target.py?from=local.
printf 'Location: /cgi-bin/target.py?from=local\r\n\r\n'
