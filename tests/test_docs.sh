#!/bin/bash
# The documentation's links: every relative link and anchor of README.md
# and docs/*.md resolves (scripts/check-links), README.md stays a front
# door of at most 250 lines, commit subjects keep to 72 characters, and
# the checker fails on a copy of the docs with a broken link, a broken
# anchor and a broken in-page anchor planted.
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }

out=$(cd "$TOP" && scripts/check-links 2>&1)
rc=$?
sed 's/^/# /' <<<"$out"
check "check-links: every relative link and anchor in README.md and docs/*.md resolves" \
	test "$rc" -eq 0
check "check-links looked at README.md and the pages of docs/ ($(tail -n 1 <<<"$out"))" \
	grep -qE '^check-links: [0-9]*[1-9][0-9]* links in ([3-9]|[1-9][0-9]+) files' <<<"$out"

n=$(wc -l <"$TOP/README.md")
check "README.md is at most 250 lines ($n)" test "$n" -le 250

# Commit subjects (docs/operations.md#contributing): at most 72
# characters from the commit that wrote the rule on; merges are git's own.
# Commits landed over it, and history on main is not rewritten: they are
# the exceptions: six subjects written by helpers working beside it.
if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	first=$(git -C "$TOP" log --format=%H -S'## Contributing' -- docs/operations.md | tail -n 1)
	if [ -n "$first" ]; then
		long=$(git -C "$TOP" log --no-merges --format='%H %s' "$first^..HEAD" |
			grep -v -e '^06e55882c6d7e57bcf6f53eb465bda54950974e7 ' \
				-e '^28363d3eaec5bcff0ebb64783abcb690608380d8 ' \
				-e '^a7c48c6046de3dc93389f5006e99716559451732 ' \
				-e '^4077c799cbe5306885b61925ecb43100974dbf1d ' \
				-e '^961364fe44430d404d3cceea7f8fe088f19f2519 ' \
				-e '^fe17310016aee2faf23591bf6fd28a90e32bd423 ' | cut -d' ' -f2- |
			awk 'length > 72' | head -n 3)
		check "commit subjects since the rule are at most 72 characters${long:+ (not: $long)}" \
			test -z "$long"
	fi
fi

# The first handler, the pages and the plot README promises.
for p in docs/daemon.md docs/cgi.md docs/frontends.md docs/library.md \
	docs/experiment.md docs/bench.md docs/operations.md; do
	check "README.md links $p" grep -qF "]($p" "$TOP/README.md"
done
check "README.md shows the experiment's plot" \
	grep -qE '^!\[[^]]*\]\(docs/experiment/[a-z_]+\.png\)' "$TOP/README.md"

# A copy of the docs with one fault planted at a time: each must fail,
# naming the file, the line and the target.
plant() { # plant NAME FILE LINE: a copy of the docs with LINE added to FILE
	mkdir -p "$T/$1"
	(cd "$TOP" && tar cf - README.md docs man ./*.example systemd) |
		tar xf - -C "$T/$1"
	printf '\n%s\n' "$3" >>"$T/$1/$2"
}
plant clean README.md 'See [the daemon](docs/daemon.md#flags-and-limits).'
out=$(cd "$T/clean" && "$TOP/scripts/check-links" 2>&1)
check "check-links passes a copy with one more good link" test $? -eq 0

plant file README.md 'See [nowhere](docs/no-such-page.md).'
out=$(cd "$T/file" && "$TOP/scripts/check-links" 2>&1)
rc=$?
check "check-links fails on a link to a missing file (exit $rc)" test "$rc" -eq 1
check "check-links names it: $(head -n 1 <<<"$out")" \
	grep -q '^README.md:[0-9]*: docs/no-such-page.md: no such file' <<<"$out"

plant anchor docs/cgi.md 'See [the flags](daemon.md#no-such-heading).'
out=$(cd "$T/anchor" && "$TOP/scripts/check-links" 2>&1)
rc=$?
check "check-links fails on an anchor no heading has (exit $rc)" test "$rc" -eq 1
check "check-links names it: $(head -n 1 <<<"$out")" \
	grep -q '^docs/cgi.md:[0-9]*: daemon.md#no-such-heading: no heading' <<<"$out"

plant self docs/daemon.md 'See [above](#flags-and-limit).'
out=$(cd "$T/self" && "$TOP/scripts/check-links" 2>&1)
rc=$?
check "check-links fails on an in-page anchor no heading has (exit $rc)" test "$rc" -eq 1

plant docsdir docs/experiment.md '![plot](docs/experiment/timeline.png)'
out=$(cd "$T/docsdir" && "$TOP/scripts/check-links" 2>&1)
rc=$?
check "check-links fails on a page's link written from the top, not from docs/ (exit $rc)" \
	test "$rc" -eq 1

# Links inside code are not links.
plant code docs/library.md '`[not a link](nowhere.md)` and'
out=$(cd "$T/code" && "$TOP/scripts/check-links" 2>&1)
check "check-links skips a link in a code span" test $? -eq 0

finish
