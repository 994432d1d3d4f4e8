#!/bin/sh
# Leaves a process behind outside its process group, as its query says:
# setsid (a session of its own), setpgid (setpgid(0, 0): a group of its
# own), double (a double fork: its parent, a sh, exits at once; it stays
# in the group), daemon (a double fork, then setsid).  Each writes its pid
# to a file once it has left, and the program answers only then, so that
# its own end does not catch it still in the group.  The body is that
# pid.  The gateway is its subreaper: it must end it all the same.
f=$(mktemp) || exit 1
# leave HOW: perl that leaves its group by HOW, writes its pid, sleeps.
leave() {
	perl -e '
	use POSIX ();
	if ($ARGV[0] eq "setsid") { POSIX::setsid() or die "setsid: $!" }
	elsif ($ARGV[0] eq "setpgid") { setpgrp(0, 0) or die "setpgid: $!" }
	open(my $o, ">", $ARGV[1]) or die; print $o "$$\n"; close $o;
	exec "sleep", "1000"' "$1" "$f" </dev/null >/dev/null 2>&1
}
case $QUERY_STRING in
setsid|setpgid) leave "$QUERY_STRING" & ;;
double) sh -c "$(command -v perl) -e 'open(my \$o, \">\", \$ARGV[0]) or die; print \$o \"\$\$\\n\"; close \$o; exec \"sleep\", \"1000\"' '$f' </dev/null >/dev/null 2>&1 &" ;;
daemon) sh -c "$(command -v perl) -e 'use POSIX (); POSIX::setsid() or die; open(my \$o, \">\", \$ARGV[0]) or die; print \$o \"\$\$\\n\"; close \$o; exec \"sleep\", \"1000\"' '$f' </dev/null >/dev/null 2>&1 &" ;;
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
