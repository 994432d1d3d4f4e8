#!/usr/bin/perl
# Reads the request body (CONTENT_LENGTH bytes of stdin) whole, then
# answers it back: the reply starts only after the last byte is in, as
# most CGI programs do.
use strict;
use warnings;

binmode STDIN;
binmode STDOUT;
my $want = $ENV{CONTENT_LENGTH} || 0;
my $body = '';
while (length($body) < $want) {
	my $n = read(STDIN, $body, $want - length($body), length($body));
	die "echo.pl: read: $!\n" unless defined $n;
	last if $n == 0;
}
print "Content-Type: application/octet-stream\r\n\r\n", $body;
