#!/usr/bin/perl
# A client redirect with a document (RFC 3875 6.2.4): Status 301, an
# absolute Location, a Content-Type and a body.
use strict;
use warnings;

print "Status: 301 Moved Permanently\r\n",
    "Location: http://example.invalid/new\r\n",
    "Content-Type: text/plain\r\n\r\n",
    "moved to http://example.invalid/new\n";
