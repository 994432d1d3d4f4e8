/*
 * dropbox.c: a file drop box on libevfcgi, written as a user would: an
 * upload form, a file list, downloads with ranges, login by cookie and a
 * JSON listing.  Run it behind nginx.conf.example (only the upstream line
 * changed):
 *
 *	DROPBOX_PASSWORD=secret examples/dropbox --listen 127.0.0.1:9000 \
 *	    --dir /srv/drop [--max-size BYTES] [--workers N]
 *
 *	GET /				the list, with an upload form
 *	POST /upload			multipart, files in the field "file"
 *					(50 MiB each; larger: 413, nothing kept)
 *	GET, HEAD /files/{name}		the file, with Range
 *	POST /login			form field "password": a session cookie
 *	DELETE /files/{name}		with that session only, else 403
 *	POST /files/{name}/delete	the same, for the form
 *	GET /api/files			[{"name", "size", "mtime"}, ...]
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evfcgi.h"

static const char	*dir = ".", *password;
static long long	 max_size = 50LL << 20;
static int		 workers = 1;

/* One upload in progress: the file being written, under a temporary name. */
struct upload {
	struct evfcgi_multipart	*mp;
	int			 fd;
	char			 tmp[4096], dest[4096];
};

/* A name that stays in dir: not empty, no '/', no NUL, not hidden. */
static int
name_ok(const char *name)
{
	return name != NULL && name[0] != '\0' && name[0] != '.' &&
	    strchr(name, '/') == NULL && strlen(name) < 256;
}

/* Sessions are files (hidden from the list): every worker sees them. */
static int
logged_in(struct evfcgi_req *req)
{
	const char	*sid;
	char		 path[4096];

	if (evfcgi_cookie(req, "sid", &sid) != 1 || strlen(sid) != 32 ||
	    strspn(sid, "0123456789abcdef") != 32)
		return 0;
	snprintf(path, sizeof(path), "%s/.sid-%s", dir, sid);
	return access(path, F_OK) == 0;
}

static void
see_other(struct evfcgi_req *req, const char *to)
{
	evfcgi_header_add(req, "Location", to);
	evfcgi_respond(req, 303, "text/plain", "", 0);
}

static void
list_page(struct evfcgi_req *req, void *arg)
{
	struct dirent	*de;
	DIR		*d;
	char		 url[1024];

	(void)arg;
	if ((d = opendir(dir)) == NULL) {
		evfcgi_respond_error(req, 500, "cannot read the folder");
		return;
	}
	evfcgi_header(req, 200, "text/html; charset=utf-8", -1);
	evfcgi_printf(req, "<!DOCTYPE html><title>Drop box</title><h1>Files"
	    "</h1><ul>\n");
	while ((de = readdir(d)) != NULL) {
		if (!name_ok(de->d_name))
			continue;
		evfcgi_url_escape(url, sizeof(url), de->d_name);
		evfcgi_printf(req, "<li><a href=\"/files/%s\">", url);
		evfcgi_write_html(req, de->d_name);
		evfcgi_printf(req, "</a> <form method=post action=\"/files/%s/"
		    "delete\" style=display:inline><button>delete</button>"
		    "</form>\n", url);
	}
	closedir(d);
	evfcgi_printf(req, "</ul><form method=post action=/upload enctype="
	    "multipart/form-data><input type=file name=file multiple> "
	    "<button>Upload</button></form><form method=post action=/login>"
	    "<input type=password name=password> <button>Log in</button>"
	    "</form>\n");
	evfcgi_finish(req);
}

static void
api_files(struct evfcgi_req *req, void *arg)
{
	struct evfcgi_json	*j = evfcgi_json_new();
	struct dirent		*de;
	struct stat		 st;
	DIR			*d;
	char			 path[4096];

	(void)arg;
	if (j == NULL || (d = opendir(dir)) == NULL) {
		evfcgi_json_free(j);
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	evfcgi_json_array(j);
	while ((de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!name_ok(de->d_name) || stat(path, &st) == -1 ||
		    !S_ISREG(st.st_mode))
			continue;
		evfcgi_json_object(j);
		evfcgi_json_key(j, "name");
		evfcgi_json_string(j, de->d_name);
		evfcgi_json_key(j, "size");
		evfcgi_json_int(j, (long long)st.st_size);
		evfcgi_json_key(j, "mtime");
		evfcgi_json_int(j, (long long)st.st_mtime);
		evfcgi_json_object_end(j);
	}
	closedir(d);
	evfcgi_json_array_end(j);
	evfcgi_json_respond(req, 200, j);
}

static void
delete_file(struct evfcgi_req *req, void *arg)
{
	const char	*name = evfcgi_path_param(req, "name");
	char		 path[4096];

	if (!logged_in(req)) {
		evfcgi_respond_error(req, 403, "log in first");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!name_ok(name) || unlink(path) == -1) {
		evfcgi_respond_error(req, name_ok(name) ? 404 : 400, NULL);
		return;
	}
	if (arg != NULL)
		see_other(req, "/");
	else
		evfcgi_respond(req, 204, NULL, NULL, 0);
}

static void
get_file(struct evfcgi_req *req, void *arg)
{
	const char	*name = evfcgi_path_param(req, "name");
	char		 path[4096];
	int		 fd;

	if (strcmp(evfcgi_method(req), "DELETE") == 0) {
		delete_file(req, arg);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!name_ok(name) || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		evfcgi_respond_error(req, name_ok(name) ? 404 : 400, NULL);
	else
		evfcgi_send_file(req, fd, NULL);
}

static void
login(struct evfcgi_req *req, void *arg)
{
	struct evfcgi_cookie_opts	 o = { .path = "/", .http_only = 1,
	    .same_site = "Strict" };
	const char			*pw;
	unsigned char			 rnd[16];
	size_t				 i, n = strlen(password);
	unsigned			 diff;
	char				 s[33], path[4096];
	int				 fd;

	(void)arg;
	if (evfcgi_form_value(req, "password", &pw) != 1) {
		evfcgi_respond_error(req, 400, "no password");
		return;
	}
	/* As long for any guess of a length. */
	diff = strlen(pw) != n;
	for (i = 0; pw[i] != '\0'; i++)
		diff |= (unsigned)(pw[i] ^ password[i % n]);
	if (diff != 0 || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		evfcgi_respond_error(req, 403, "wrong password");
		return;
	}
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(s + 2 * i, 3, "%02x", rnd[i]);
	snprintf(path, sizeof(path), "%s/.sid-%s", dir, s);
	if ((fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == -1) {
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	close(fd);
	evfcgi_set_cookie(req, "sid", s, &o);
	see_other(req, "/");
}

/* A file part begins: written under a hidden name until it is whole. */
static int
up_part(struct evfcgi_req *req, const struct evfcgi_part *p, void *arg)
{
	struct upload	*u = arg;

	(void)req;
	if (p->filename == NULL || strcmp(p->name, "file") != 0)
		return 0;
	if (p->filename[0] == '\0')	/* the form sent with no file */
		return 0;
	if (!name_ok(p->filename))
		return 400;
	snprintf(u->dest, sizeof(u->dest), "%s/%s", dir, p->filename);
	snprintf(u->tmp, sizeof(u->tmp), "%s/.upload-XXXXXX", dir);
	return (u->fd = mkstemp(u->tmp)) == -1 ? 500 : 0;
}

static int
up_data(struct evfcgi_req *req, const struct evfcgi_part *p,
    const void *data, size_t len, void *arg)
{
	struct upload	*u = arg;

	(void)req;
	(void)p;
	if (u->fd != -1 && write(u->fd, data, len) != (ssize_t)len)
		return 500;
	return 0;
}

static int
up_end(struct evfcgi_req *req, const struct evfcgi_part *p, void *arg)
{
	struct upload	*u = arg;
	int		 rc;

	(void)req;
	(void)p;
	if (u->fd == -1)
		return 0;
	rc = close(u->fd) == -1 || rename(u->tmp, u->dest) == -1 ? 500 : 0;
	u->fd = -1;
	return rc;
}

/* The form ended, or the request died: what is half written goes. */
static void
up_free(struct evfcgi_req *req, void *arg)
{
	struct upload	*u = arg;

	(void)req;
	if (u->fd != -1) {
		close(u->fd);
		unlink(u->tmp);
	}
	evfcgi_multipart_free(u->mp);
	free(u);
}

static void
up_done(struct evfcgi_req *req, int status, void *arg)
{
	evfcgi_on_abort(req, NULL, NULL);
	up_free(req, arg);
	if (status != 0)
		evfcgi_respond_error(req, status, NULL);
	else
		see_other(req, "/");
}

static void
upload(struct evfcgi_req *req, void *arg)
{
	static const struct evfcgi_multipart_cbs cbs = { up_part, up_data,
	    up_end, up_done };
	struct evfcgi_multipart_limits	 lim = { .max_file =
	    (uint64_t)max_size };
	struct upload			*u = calloc(1, sizeof(*u));

	(void)arg;
	if (u == NULL) {
		evfcgi_respond_error(req, 503, NULL);
		return;
	}
	u->fd = -1;
	if ((u->mp = evfcgi_multipart_new(req, &cbs, &lim, u)) == NULL) {
		evfcgi_respond_error(req, errno == EINVAL ? 400 : 500, NULL);
		free(u);
		return;
	}
	evfcgi_on_abort(req, up_free, u);
}

int
main(int argc, char **argv)
{
	struct evfcgi_server	*srv;
	char			 err[256];
	int			 i, nlisten = 0;

	signal(SIGPIPE, SIG_IGN);
	password = getenv("DROPBOX_PASSWORD");
	if ((srv = evfcgi_server_new(NULL, NULL)) == NULL)
		return 1;
	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--dir") == 0)
			dir = argv[i + 1];
		else if (strcmp(argv[i], "--max-size") == 0)
			max_size = atoll(argv[i + 1]);
		else if (strcmp(argv[i], "--workers") == 0)
			workers = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--listen") == 0 && evfcgi_listen(srv,
		    argv[i + 1], 0660, err, sizeof(err)) == 0)
			nlisten++;
		else {
			fprintf(stderr, "dropbox: %s %s: %s\n", argv[i],
			    argv[i + 1], strcmp(argv[i], "--listen") == 0 ? err :
			    "unknown option");
			return 2;
		}
	}
	if (i != argc || nlisten == 0 || password == NULL ||
	    *password == '\0' || max_size <= 0) {
		fprintf(stderr, "usage: DROPBOX_PASSWORD=... dropbox --listen "
		    "ADDR --dir DIR [--max-size BYTES] [--workers N]\n");
		return 2;
	}
	evfcgi_route_methods(srv, "/", "GET", list_page, NULL);
	evfcgi_route_methods(srv, "/api/files", "GET", api_files, NULL);
	evfcgi_route_methods(srv, "/login", "POST", login, NULL);
	evfcgi_route_ex(srv, "/upload", EVFCGI_ROUTE_STREAM, "POST", upload,
	    NULL);
	evfcgi_route_methods(srv, "/files/{name}", "GET,DELETE", get_file,
	    NULL);
	evfcgi_route_methods(srv, "/files/{name}/delete", "POST", delete_file,
	    "form");
	i = evfcgi_run_workers(srv, workers);
	evfcgi_server_free(srv);
	return i == 0 ? 0 : 1;
}
