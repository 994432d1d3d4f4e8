/*
 * authorizer.c: a FastCGI Authorizer (FastCGI 1.0 6.3) on libevfcgi, and
 * the page it guards.  The web server asks it about every request
 * (lighttpd's "mode" => "authorizer", Apache's mod_authnz_fcgi):
 *
 *   HTTP_AUTHORIZATION exactly "Bearer open-sesame"
 *       200, "Variable-AUTH_USER: demo": the web server lets the request
 *       through and hands its responder AUTH_USER=demo
 *   anything else
 *       401 with WWW-Authenticate: Bearer realm="evfcgid" and a short
 *       body, which the web server sends to the client as it is
 *
 * As a Responder, on any path, it answers "AUTH_USER=..." (what the web
 * server passed on, "-" when nothing): the guarded page, for a web
 * server that sends both roles here.
 *
 * usage: authorizer [--listen ADDR]   (without --listen: fd 0, a listening
 * socket, as under spawn-fcgi)
 */
#include <sys/types.h>

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "evfcgi.h"

#define TOKEN	"Bearer open-sesame"

static void	authorize(struct evfcgi_req *, void *);
static void	guarded(struct evfcgi_req *, void *);

static const char usage[] =
    "usage: authorizer [--listen ADDR]\n"
    "FastCGI Authorizer: lets through requests with the header\n"
    "'Authorization: " TOKEN "' (Variable-AUTH_USER: demo), answers\n"
    "the others 401; as a Responder, shows the AUTH_USER it was given.\n"
    "  --listen ADDR  HOST:PORT, [V6]:PORT or unix:/path; without it, fd 0\n"
    "                 must be a listening socket (spawn-fcgi)\n"
    "  -h, --help     this text\n";

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct evfcgi_server	*srv;
	const char		*addr = NULL;
	char			 err[256];
	int			 ch, rc;

	while ((ch = getopt_long(argc, argv, "l:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			addr = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "authorizer: unexpected argument '%s'\n%s",
		    argv[optind], usage);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((srv = evfcgi_server_new(NULL, NULL)) == NULL) {
		fprintf(stderr, "authorizer: out of memory\n");
		return 1;
	}
	/* "/" as a prefix: every path, in each role. */
	if (evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX |
	    EVFCGI_ROUTE_AUTHORIZER, NULL, authorize, NULL) == -1 ||
	    evfcgi_route_prefix(srv, "/", guarded, NULL) == -1) {
		fprintf(stderr, "authorizer: cannot add routes\n");
		return 1;
	}
	if (addr != NULL ? evfcgi_listen(srv, addr, 0660, err,
	    sizeof(err)) == -1 : evfcgi_listen_fd(srv, 0) == -1) {
		fprintf(stderr, "authorizer: %s\n%s", addr != NULL ? err :
		    "no --listen and fd 0 is not a listening socket", usage);
		return 1;
	}
	if (evfcgi_handle_signals(srv) == -1)
		fprintf(stderr, "authorizer: signals not handled\n");
	rc = evfcgi_run(srv);
	evfcgi_server_free(srv);
	return rc == 0 ? 0 : 1;
}

/* The Authorizer: 200 with a variable lets the request through. */
static void
authorize(struct evfcgi_req *req, void *arg)
{
	static const char	 denied[] = "This needs a bearer token.\n";
	const char		*auth = evfcgi_param(req, "HTTP_AUTHORIZATION");

	(void)arg;
	if (auth != NULL && strcmp(auth, TOKEN) == 0) {
		evfcgi_header_add(req, "Variable-AUTH_USER", "demo");
		evfcgi_respond(req, 200, NULL, NULL, 0);
		return;
	}
	evfcgi_header_add(req, "WWW-Authenticate", "Bearer realm=\"evfcgid\"");
	evfcgi_respond(req, 401, "text/plain", denied, sizeof(denied) - 1);
}

/* The Responder: what the authorizer's variable became. */
static void
guarded(struct evfcgi_req *req, void *arg)
{
	const char	*user = evfcgi_param(req, "AUTH_USER");

	(void)arg;
	if (evfcgi_header(req, 200, "text/plain", -1) == 0)
		evfcgi_printf(req, "AUTH_USER=%s\n", user != NULL ? user : "-");
	evfcgi_finish(req);
}
