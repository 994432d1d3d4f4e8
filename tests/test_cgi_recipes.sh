#!/bin/bash
# evfcgid --cgi behind the configurations people copy (issue 27): cgit,
# gitweb, git clone over smart HTTP (git-http-backend) and PHP (php-cgi),
# each behind the real nginx with Debian's stock files as nginx-common
# installs them (fastcgi_params, then fastcgi.conf in its place) and the
# location block each project's documentation gives, copied as written
# (PHP's manual; cgitrc(5), gitweb(1) and git-http-backend(1) give none
# for nginx, so the Arch Linux wiki's, which users copy: written from
# those pages' text, not fetched here, since this machine has no web);
# only the socket, the paths of this test's repositories and the config
# files' names are changed (marked "# here:").  And git-http-backend(1)'s
# lighttpd recipe.  These blocks set after the include what the stock
# file sets already (QUERY_STRING, SCRIPT_NAME, HTTP_HOST; SCRIPT_FILENAME
# with fastcgi.conf): nginx sends both, and the gateway must take the
# last.  Before (a parameter given twice refused): cgit 400 x7, gitweb
# 400, git clone failed, php 400.  CGI_RECIPES_FCGIWRAP=1: fcgiwrap
# behind the same lines too, its answers said, not checked.
#
# The packages: cgit, gitweb, git, php-cgi (scripts/install-deps).  A
# recipe whose package is missing is a failure, not a skip.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/frontends.sh"
source "$(dirname "$0")/cgi.sh"

command -v curl >/dev/null || { not_ok "curl is installed"; finish; }
[ -x "$NGINX" ] || { not_ok "nginx is installed ($NGINX)"; finish; }
cgi_backend_usable evfcgid || { not_ok "evfcgid --cgi: $CGI_SKIP"; finish; }
CGIT=/usr/lib/cgit/cgit.cgi
GITWEB=/usr/share/gitweb/gitweb.cgi
PHP_CGI=$(command -v php-cgi || echo /usr/bin/php-cgi)
for f in "$CGIT" "$GITWEB" "$GIT_HTTP_BACKEND" "$PHP_CGI" /etc/nginx/fastcgi_params \
	/etc/nginx/fastcgi.conf; do
	[ -e "$f" ] || not_ok "$f is installed (cgit, gitweb, git, php-cgi, nginx-common)"
done
[ "$FAILS" = 0 ] || finish

# git as a user with no configuration of their own, never through a proxy.
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=tester GIT_AUTHOR_EMAIL=tester@example.invalid
export GIT_COMMITTER_NAME=tester GIT_COMMITTER_EMAIL=tester@example.invalid
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1 NO_PROXY=127.0.0.1
mkdir -p "$HOME"

# --- What the recipes serve: a bare repository, the config files, PHP. --
REPOS=$T/git
mkdir -p "$REPOS" "$T/work"
git init -q -b main "$T/work" &&
	echo "recipes readme" >"$T/work/README" &&
	git -C "$T/work" add README && git -C "$T/work" commit -q -m "first commit" &&
	echo "second" >>"$T/work/README" &&
	git -C "$T/work" commit -q -am "second commit" &&
	git clone -q --bare "$T/work" "$REPOS/proj.git" ||
	{ not_ok "a test repository is made"; finish; }
echo "the test repository" >"$REPOS/proj.git/description"
# Debian's /etc/cgitrc (css, logo under /cgit-css/), the repositories
# found by scan-path, no cache.
cat >"$T/cgitrc" <<EOF
css=/cgit-css/cgit.css
logo=/cgit-css/cgit.png
virtual-root=/
cache-size=0
scan-path=$REPOS
EOF
printf '$projectroot = "%s";\n$git_temp = "%s";\n' "$REPOS" "$T" >"$T/gitweb.conf"
PHPROOT=$T/php
mkdir -p "$PHPROOT"
# A PHP page run through a CGI gateway is a CGI program: php-cgi as its
# interpreter (php-cgi skips the #! line).
printf '#!%s\n<?php echo "php ok ", htmlspecialchars($_GET["x"] ?? ""), " ", $_SERVER["SCRIPT_NAME"], "\\n";\n' \
	"$PHP_CGI" >"$PHPROOT/index.php"
chmod 755 "$PHPROOT/index.php"

# --- The recipes, as their documentation gives them. -------------------
# Each a server block of its own; SOCK stands for the gateway's address.

# cgit: cgit's own documentation gives Apache only; the nginx block cgit
# users copy is the Arch Linux wiki's "cgit" page (section "Nginx", with
# fcgiwrap), here with Debian's paths (/usr/lib/cgit/cgit.cgi,
# /usr/share/cgit: its SCRIPT_FILENAME, $document_root/cgit.cgi there,
# is /usr/lib/cgit/cgit.cgi here), and CGIT_CONFIG naming this test's
# cgitrc.
recipe_cgit() {
	cat <<EOF
	root /usr/share/cgit;
	try_files \$uri @cgit;
	location /cgit-css/ {	# here: Debian's css=/cgit-css/ (/etc/cgitrc)
		rewrite ^/cgit-css(/.*)\$ \$1 break;
		root /usr/share/cgit;
	}
	location @cgit {
		include             fastcgi_params;
		fastcgi_param       SCRIPT_FILENAME $CGIT;	# here: Debian's path
		fastcgi_param       PATH_INFO       \$uri;
		fastcgi_param       QUERY_STRING    \$args;
		fastcgi_param       HTTP_HOST       \$server_name;
		fastcgi_param       CGIT_CONFIG     $T/cgitrc;	# here
		fastcgi_pass        SOCK;
	}
EOF
}

# gitweb: the Arch Linux wiki's "gitweb" page, section "Nginx" (with
# fcgiwrap); gitweb(1) itself gives Apache only.  GITWEB_CONFIG names this
# test's file.
recipe_gitweb() {
	cat <<EOF
	location /gitweb.cgi {
		include fastcgi_params;
		gzip off;
		fastcgi_param   SCRIPT_FILENAME  $GITWEB;
		fastcgi_param   GITWEB_CONFIG  $T/gitweb.conf;	# here
		fastcgi_pass    SOCK;
	}
	location / {
		root /usr/share/gitweb;
		index gitweb.cgi;
	}
EOF
}

# git-http-backend: git-http-backend(1) gives Apache and lighttpd (below)
# only; this is the nginx block of the Arch Linux wiki's "cgit" page
# (section "Git clone over http", with fcgiwrap), GIT_PROJECT_ROOT and
# HOME this test's.
recipe_git() {
	cat <<EOF
	location ~ /.+/(info/refs|git-upload-pack) {
		include             fastcgi_params;
		fastcgi_param       SCRIPT_FILENAME $GIT_HTTP_BACKEND;
		fastcgi_param       PATH_INFO           \$uri;
		fastcgi_param       GIT_HTTP_EXPORT_ALL 1;
		fastcgi_param       GIT_PROJECT_ROOT    $REPOS;	# here
		fastcgi_param       HOME                $REPOS;	# here
		fastcgi_pass        SOCK;
	}
EOF
}

# PHP: the PHP manual's "Installation on Unix systems: Nginx 1.4.x"
# (install.unix.nginx), its location for PHP pages, written for PHP-FPM.
recipe_php() {
	cat <<EOF
	root $PHPROOT;
	location ~* \.php\$ {
		fastcgi_index   index.php;
		fastcgi_pass    SOCK;
		include         fastcgi_params;
		fastcgi_param   SCRIPT_FILENAME    \$document_root\$fastcgi_script_name;
		fastcgi_param   SCRIPT_NAME        \$fastcgi_script_name;
	}
EOF
}

# recipes_nginx DIR ADDR PARAMS: DIR/nginx.conf, one server per recipe on
# ports PORT_CGIT, PORT_GITWEB, PORT_GIT, PORT_PHP (set here), their
# "include fastcgi_params" naming PARAMS (fastcgi_params or fastcgi.conf,
# linked from /etc/nginx as installed) and SOCK the gateway at ADDR.
recipes_nginx() {
	local dir=$1 addr=$2 params=$3 r port
	mkdir -p "$dir"/tmp
	ln -sf "/etc/nginx/$params" "$dir/$params"
	ln -sf /etc/nginx/mime.types "$dir/mime.types"
	{
		cat <<EOF
user root;
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 256; }
http {
	include mime.types;
	access_log off;
	client_body_temp_path $dir/tmp;
	fastcgi_temp_path $dir/tmp;
	proxy_temp_path $dir/tmp;
	uwsgi_temp_path $dir/tmp;
	scgi_temp_path $dir/tmp;
EOF
		for r in cgit gitweb git php; do
			port=$(freeport)
			printf -v "PORT_${r^^}" %s "$port"
			printf '\tserver {\n\tlisten 127.0.0.1:%s;\n\tserver_name localhost;\n' "$port"
			"recipe_$r" | sed -e "s|SOCK|$addr|" \
				-e "s|include\( *\)fastcgi_params;|include\1$params;|"
			printf '\t}\n'
		done
		echo "}"
	} >"$dir/nginx.conf"
	echo "$PORT_CGIT" >"$dir/port"
}

# page NAME URL WANT: GET URL; a check that it answers 200 with WANT (a
# grep -E pattern) in its body; records "NAME CODE" in $T/answers.  For
# the reference peer (B=fcgiwrap) what it did is only said, "# ...".
page() {
	local name=$1 url=$2 want=$3 code
	code=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 20 "$url")
	say "$name: 200 with /$want/ ($code, $(tr -d '\n' <"$T/body" | head -c 60))" \
		eval '[ "$code" = 200 ] && grep -Eq "$want" "$T/body"'
	[ "$B" = evfcgid ] && echo "$TAG $name $code" >>"$T/answers"
}

# say NAME CMD...: a check of CMD for evfcgid; for fcgiwrap a comment.
say() {
	local name=$1
	shift
	if [ "$B" = evfcgid ]; then
		check "$TAG: $name" "$@"
	elif "$@"; then
		echo "# fcgiwrap: $TAG: $name: yes"
	else
		echo "# fcgiwrap: $TAG: $name: no"
	fi
}

# --- Behind nginx, with each stock params file. -------------------------
: >"$T/answers"
# fcgiwrap, the reference peer, behind the same lines: what it does is
# said, not checked (it runs the first SCRIPT_FILENAME of two).
for B in evfcgid ${CGI_RECIPES_FCGIWRAP:+fcgiwrap}; do
for params in fastcgi_params fastcgi.conf; do
	TAG="nginx+$params"
	start_cgi_backend "$B" / || { not_ok "$B: $TAG: the gateway starts"; continue; }
	dir=$T/nginx.$B.$params
	recipes_nginx "$dir" "$CGI_ADDR" "$params"
	start_nginx "$dir" || { not_ok "$TAG: nginx starts"; stop_cgi_backend; continue; }

	# cgit: 7 pages.
	u=http://127.0.0.1:$PORT_CGIT
	page "cgit index /" "$u/" "proj"
	page "cgit /proj.git/ (summary)" "$u/proj.git/" "the test repository"
	page "cgit /proj.git/log/" "$u/proj.git/log/" "second commit"
	page "cgit /proj.git/tree/" "$u/proj.git/tree/" "README"
	page "cgit /proj.git/commit/" "$u/proj.git/commit/" "second commit"
	page "cgit /proj.git/plain/README" "$u/proj.git/plain/README" "^recipes readme"
	page "cgit /proj.git/log/?qt=grep&q=first (a query)" "$u/proj.git/log/?qt=grep&q=first" "first commit"
	code=$(curl -s -o /dev/null -w '%{http_code}' "$u/cgit-css/cgit.css")
	say "cgit's css, served by nginx ($code)" test "$code" = 200

	# gitweb: 6 pages.
	u=http://127.0.0.1:$PORT_GITWEB
	page "gitweb / (project list)" "$u/" "proj\\.git"
	page "gitweb summary" "$u/gitweb.cgi?p=proj.git;a=summary" "the test repository"
	page "gitweb log" "$u/gitweb.cgi?p=proj.git;a=log" "second commit"
	page "gitweb tree" "$u/gitweb.cgi?p=proj.git;a=tree" "README"
	page "gitweb commit" "$u/gitweb.cgi?p=proj.git;a=commit;h=HEAD" "second commit"
	page "gitweb blob_plain" "$u/gitweb.cgi?p=proj.git;a=blob_plain;f=README;hb=HEAD" "^recipes readme"

	# git clone over smart HTTP.
	u=http://127.0.0.1:$PORT_GIT
	rm -rf "$T/clone"
	out=$(git clone -q "$u/proj.git" "$T/clone" 2>&1)
	rc=$?
	[ "$B" = evfcgid ] && echo "$TAG git-clone $rc" >>"$T/answers"
	say "git clone $u/proj.git ($rc: $(head -n 2 <<<"$out" | tr '\n' ' '))" \
		eval '[ "$rc" = 0 ] && [ "$(git -C "$T/clone" rev-parse HEAD)" = "$(git -C "$REPOS/proj.git" rev-parse HEAD)" ]'

	# PHP: 2 pages.
	u=http://127.0.0.1:$PORT_PHP
	page "php /index.php" "$u/index.php" "^php ok  /index.php"
	page "php /index.php?x=1" "$u/index.php?x=1" "^php ok 1 /index.php"

	kill "$NGINX_PID" 2>/dev/null
	wait "$NGINX_PID" 2>/dev/null
	stop_cgi_backend
done
done
B=evfcgid

# --- git-http-backend(1)'s lighttpd recipe. -----------------------------
# As the man page gives it for mod_cgi, with mod_fastcgi to the gateway
# in cgi.assign's place (lighttpd's own way to a FastCGI backend:
# "check-local" => "disable", the script being the alias's target).
if command -v lighttpd >/dev/null; then
	TAG=lighttpd
	start_evfcgid_cgi / || not_ok "$TAG: evfcgid --cgi starts"
	dir=$T/lighttpd
	mkdir -p "$dir/www"
	port=$(freeport)
	cat >"$dir/lighttpd.conf" <<EOF
server.modules = ( "mod_alias", "mod_setenv", "mod_fastcgi" )
server.document-root = "$dir/www"
server.bind = "127.0.0.1"
server.port = $port
server.pid-file = "$dir/lighttpd.pid"
server.errorlog = "$dir/error.log"
server.upload-dirs = ( "$dir" )
# git-http-backend(1), EXAMPLES, Lighttpd:
alias.url += ( "/git" => "$GIT_HTTP_BACKEND" )
\$HTTP["url"] =~ "^/git" {
	# here: instead of cgi.assign = ("" => ""), the gateway
	fastcgi.server = ( "/git" => (( "host" => "${CGI_ADDR%:*}", "port" => ${CGI_ADDR##*:},
		"check-local" => "disable" )) )
	setenv.add-environment = (
		"GIT_PROJECT_ROOT" => "$REPOS",
		"GIT_HTTP_EXPORT_ALL" => ""
	)
}
EOF
	spawn lighttpd -D -f "$dir/lighttpd.conf" 2>>"$dir/stderr"
	if wait_port "127.0.0.1:$port" 10; then
		rm -rf "$T/clone"
		out=$(git clone -q "http://127.0.0.1:$port/git/proj.git" "$T/clone" 2>&1)
		rc=$?
		echo "$TAG git-clone $rc" >>"$T/answers"
		check "$TAG: git clone through git-http-backend(1)'s lighttpd recipe ($rc: $(head -n 2 <<<"$out" | tr '\n' ' '))" \
			eval '[ "$rc" = 0 ] && [ "$(git -C "$T/clone" rev-parse HEAD)" = "$(git -C "$REPOS/proj.git" rev-parse HEAD)" ]'
		kill "$SPAWNED" 2>/dev/null
	else
		not_ok "$TAG: lighttpd starts ($(tail -n 2 "$dir/error.log" "$dir/stderr" 2>/dev/null | tr '\n' ' '))"
	fi
	stop_cgi_backend
fi

echo "# answers: $(awk '{ print $NF }' "$T/answers" | sort | uniq -c | tr -s ' \n' '  ')"
finish
