#!/usr/bin/perl
# A header block of over 64 KiB: 1200 lines "X-Filler-NNNN: " and 56
# x's (74 bytes each, 88800 bytes), then a short body.
use strict;
use warnings;

$| = 1;
print "Content-Type: text/plain\r\n";
printf("X-Filler-%04d: %s\r\n", $_, 'x' x 56) for 1 .. 1200;
print "\r\nbody after a huge header\n";
