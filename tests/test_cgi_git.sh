#!/bin/bash
# git over HTTP through nginx and a CGI gateway (issue 12): git's own
# git-http-backend run by fcgiwrap (the reference peer) and by evfcgid
# --cgi, behind the nginx configuration of tests/cgi.sh (location /git/).
# A repository with some history (commits, a branch, tags, a few MB of
# binary) is cloned and mirrored over HTTP and compared ref by ref with
# the source, fsck'd; then a commit, a branch and a tag are pushed (the
# pack over 1 MiB, so git sends it chunked) and the source must have
# them.  The location includes Debian's stock params file as installed:
# for evfcgid fastcgi.conf, which sets SCRIPT_FILENAME to
# $document_root$fastcgi_script_name before the location names
# git-http-backend (nginx sends both; the last must run); for fcgiwrap
# fastcgi_params, since fcgiwrap runs the first (getenv over the list:
# 403 for $document_root/git).  A backend that cannot run is a failure.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v git >/dev/null || { not_ok "git is installed"; finish; }
[ -x "$GIT_HTTP_BACKEND" ] || { not_ok "git-http-backend is installed ($GIT_HTTP_BACKEND)"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }

# git as a user with no configuration of their own, never through a proxy.
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.invalid
export GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.invalid
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1
mkdir -p "$HOME"

# refs_of REPO: every ref of REPO with its object, one per line, sorted.
refs_of() { git -C "$1" for-each-ref --format='%(objectname) %(refname)' | sort; }

# --- The source: history on main, a branch, an annotated and a light tag.
W=$T/work
git init -q -b main "$W" || { not_ok "git init"; finish; }
for i in 1 2 3; do
	echo "line $i" >>"$W/file.txt"
	git -C "$W" add file.txt && git -C "$W" commit -q -m "commit $i"
done
head -c 3145728 /dev/urandom >"$W/blob.bin"
git -C "$W" add blob.bin && git -C "$W" commit -q -m "3 MiB of binary"
git -C "$W" tag -a v1.0 -m "release 1.0"
git -C "$W" checkout -q -b feature
echo feature >"$W/feature.txt"
git -C "$W" add feature.txt && git -C "$W" commit -q -m "a feature"
git -C "$W" tag light
git -C "$W" checkout -q main
echo "line 4" >>"$W/file.txt"
git -C "$W" commit -q -am "commit 4"
mkdir -p "$T/repos"
git clone -q --bare "$W" "$T/repos/src.git" &&
	git -C "$T/repos/src.git" config http.receivepack true ||
	{ not_ok "the source repository is made"; finish; }
SRC=$T/repos/src.git
echo "# source: $(git -C "$SRC" rev-list --all | wc -l) commits, $(refs_of "$SRC" | wc -l) refs"
WWW=$T/www
cgi_www "$WWW" || { not_ok "the CGI scripts are copied to $WWW"; finish; }

# run_backend B: clone, mirror, push through nginx and B.
run_backend() {
	local b=$1 url c m t0 faults head
	start_cgi_backend "$b" "$(dirname "$GIT_HTTP_BACKEND")" tcp 4 ||
		{ not_ok "$b: starts (log: $(tail -n 3 "$CGI_LOG"))"; return; }
	[ "$b" = evfcgid ] && CGI_NGINX_PARAMS=/etc/nginx/fastcgi.conf
	start_cgi_nginx "$CGI_ADDR" "$WWW" "git=$T/repos" ||
		{ not_ok "$b: nginx in front of it starts"; return; }
	CGI_NGINX_PARAMS=/etc/nginx/fastcgi_params
	url=$CGI_URL/git/src.git
	c=$T/clone.$b
	m=$T/mirror.$b.git

	# --- Reading: ls-remote, clone, mirror.
	check "$b: git ls-remote over HTTP lists the source's refs" \
		eval 'diff <(git ls-remote --refs "$url" | awk "{ print \$1, \$2 }" | sort) <(refs_of "$SRC")'
	t0=$(now_ns)
	check "$b: git clone over HTTP succeeds" git clone -q "$url" "$c"
	echo "# $b: clone took $(ms_since "$t0") ms"
	faults=""
	while read -r obj ref; do
		case $ref in
		refs/heads/*) head=refs/remotes/origin/${ref#refs/heads/} ;;
		*) head=$ref ;;
		esac
		[ "$(git -C "$c" rev-parse -q --verify "$head")" = "$obj" ] || faults+=" $ref"
	done < <(refs_of "$SRC")
	check "$b: the clone has every ref of the source at the same object${faults:+ (differ:$faults)}" \
		test -z "$faults"
	check "$b: the clone's working tree is main's (file.txt, blob.bin)" \
		eval 'cmp -s "$c/blob.bin" "$W/blob.bin" && [ "$(git -C "$W" show main:file.txt)" = "$(cat "$c/file.txt")" ]'
	check "$b: git fsck --full of the clone is clean" git -C "$c" fsck --no-progress --full --strict
	check "$b: git clone --mirror over HTTP succeeds" git clone -q --mirror "$url" "$m"
	check "$b: the mirror's refs are the source's, byte for byte" \
		eval 'diff <(refs_of "$m") <(refs_of "$SRC")'
	check "$b: git fsck --full of the mirror is clean" git -C "$m" fsck --no-progress --full --strict
	# Many requests in a row (each a GET then a POST) and four clones at once.
	local fails=0 i
	for i in $(seq 20); do
		git ls-remote --refs "$url" >/dev/null 2>>"$T/ls-remote.err" || fails=$((fails + 1))
	done
	check "$b: 20 git ls-remote in a row all succeed ($fails failed)" test "$fails" -eq 0
	for i in 1 2 3 4; do
		spawn git clone -q --mirror "$url" "$m.$i"
	done
	fails=0
	for i in 1 2 3 4; do
		# PIDS[-4] is clone 1: each mirror's own clone, not another's.
		wait "${PIDS[$((i - 5))]}" && diff -q <(refs_of "$m.$i") <(refs_of "$SRC") >/dev/null ||
			fails=$((fails + 1))
	done
	check "$b: four clones at once all match the source ($fails did not)" test "$fails" -eq 0

	# --- Writing: a commit with 2 MiB of binary (the pack goes chunked),
	# a new branch and a tag.
	head -c 2097152 /dev/urandom >"$c/push-$b.bin"
	git -C "$c" add "push-$b.bin" && git -C "$c" commit -q -m "pushed through $b"
	git -C "$c" branch "pushed-$b"
	git -C "$c" tag -a "pushed-$b-tag" -m "a tag pushed through $b"
	t0=$(now_ns)
	check "$b: git push of a new commit, a branch and a tag over HTTP succeeds" \
		git -C "$c" push -q origin main "pushed-$b" "pushed-$b-tag"
	echo "# $b: push took $(ms_since "$t0") ms"
	check "$b: the source's main is the pushed commit" \
		test "$(git -C "$SRC" rev-parse main)" = "$(git -C "$c" rev-parse main)"
	check "$b: the source has the pushed branch and tag" \
		eval '[ "$(git -C "$SRC" rev-parse "pushed-$b")" = "$(git -C "$c" rev-parse "pushed-$b")" ] &&
			[ "$(git -C "$SRC" rev-parse "pushed-$b-tag")" = "$(git -C "$c" rev-parse "pushed-$b-tag")" ]'
	check "$b: the pushed file is in the source byte for byte" \
		eval 'cmp -s <(git -C "$SRC" show "main:push-$b.bin") "$c/push-$b.bin"'
	check "$b: git fsck --full of the source after the push is clean" \
		git -C "$SRC" fsck --no-progress --full --strict
	check "$b: a fresh clone has the pushed history" \
		eval 'git clone -q "$url" "$c.again" && [ "$(git -C "$c.again" rev-parse HEAD)" = "$(git -C "$c" rev-parse main)" ]'
	stop_cgi_nginx
	stop_cgi_backend
}

cgi_each_backend run_backend
finish
