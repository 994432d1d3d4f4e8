#!/bin/sh
# Leaves `sleep SECS` behind outside its process group, as its query
# HOW+SECS says: setsid (a session of its own) or double (a double fork:
# its parent, a sh, exits at once).  Answers once it has left, with its
# pid (as this program's pid namespace numbers it).  SECS makes it
# findable by its command line (pgrep -f "sleep SECS").
how=${QUERY_STRING%%+*}
secs=${QUERY_STRING#*+}
f=$(mktemp) || exit 1
case $how in
setsid) perl -e 'use POSIX (); POSIX::setsid() or die "setsid: $!";
	open(my $o, ">", $ARGV[0]) or die; print $o "$$\n"; close $o;
	exec "sleep", $ARGV[1]' "$f" "$secs" </dev/null >/dev/null 2>&1 & ;;
double) sh -c 'perl -e '\''open(my $o, ">", $ARGV[0]) or die;
	print $o "$$\n"; close $o; exec "sleep", $ARGV[1]'\'' "$1" "$2" &' \
	sh "$f" "$secs" </dev/null >/dev/null 2>&1 ;;
*) echo none >"$f" ;;
esac
i=0
while [ ! -s "$f" ] && [ "$i" -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
pid=$(cat "$f")
rm -f "$f"
printf 'Content-Type: text/plain\r\n\r\n%s\n' "$pid"
