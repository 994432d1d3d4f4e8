/*
 * check_authvar.c: the names an Authorizer may hand on as Variable-NAME
 * (issue 37, item 4).  The front end (lighttpd, Apache's mod_authnz_fcgi)
 * sets each as NAME in the environment of what serves the request next,
 * so a name that changes how a program runs before its own code does is
 * refused, by family: every name the review listed, other members of
 * each family, in any case; and the names an application means to pass
 * still pass.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "evfcgi.h"
#include "fcgi_proto.h"
#include "tests/fcgi_peer.h"
#include "tests/suite.h"

static struct evfcgi_limits	 lim;
static const char		*try_name;	/* what the handler adds */
static int			 try_rc;	/* what it got */

static void
setup(void)
{
	evfcgi_limits_default(&lim);
	lim.sndbuf = 0;
	peer_ids(1, 4);
	try_rc = 2;
}

static void
teardown(void)
{
	if (srv != NULL)
		evfcgi_server_free(srv);
	if (base != NULL)
		event_base_free(base);
	srv = NULL;
	base = NULL;
}

/* The authorizer: adds "Variable-" try_name, then lets it through. */
static void
h_try(struct evfcgi_req *req, void *arg)
{
	char	 name[128];

	(void)arg;
	snprintf(name, sizeof(name), "Variable-%s", try_name);
	try_rc = evfcgi_header_add(req, name, "x");
	evfcgi_respond(req, 200, NULL, NULL, 0);
}

/* What evfcgi_header_add() answered for Variable-NAME in an authorizer. */
static int
try(const char *name)
{
	static const char *const nv[] = { "REQUEST_URI", "/", NULL };
	struct wire	 w = { .len = 0 };
	struct peer	*p;

	try_name = name;
	try_rc = 2;
	w_begin(&w, 1, FCGI_AUTHORIZER, 0);
	w_params(&w, 1, nv);
	p = exchange(&w, 1);
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	peer_free(p);
	return try_rc;
}

static void
start(void)
{
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(base, &lim));
	ck_assert_int_eq(evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX |
	    EVFCGI_ROUTE_AUTHORIZER, NULL, h_try, NULL), 0);
}

/* core: every name of the review, and its family's other members. */
START_TEST(authvar_refused)
{
	static const char *const refused[] = {
		/* The review's list (issue 37, item 4). */
		"GLIBC_TUNABLES", "GCONV_PATH", "PHPRC", "PHP_VALUE",
		"PERL5OPT", "PERL5LIB", "PYTHONPATH", "PYTHONSTARTUP",
		"NODE_OPTIONS", "RUBYOPT", "GIT_CONFIG_PARAMETERS",
		"GIT_EXEC_PATH", "HOME", "TMPDIR",
		/* Other members of the families, and the case folded. */
		"PHP_ADMIN_VALUE", "PERLLIB", "PERL5DB", "PYTHONHOME",
		"pythonwarnings", "NODE_PATH", "RUBYLIB", "GIT_DIR",
		"git_ssh_command", "LD_PRELOAD", "ld_audit", "GLIBC_anything",
		"GCONV_X", "MALLOC_CHECK_", "BASH_FUNC_x%%", "LOCPATH",
		"NLSPATH", "HOSTALIASES", "RES_OPTIONS", "TZDIR", "JAVA_TOOL_OPTIONS",
		"_JAVA_OPTIONS", "BASH_ENV", "ENV", "IFS", "PATH", "HTTP_HOST",
		"REMOTE_USER", "SCRIPT_FILENAME", NULL
	};
	size_t	 i;
	int	 rc;

	start();
	for (i = 0; refused[i] != NULL; i++) {
		/* BASH_FUNC_x%% is not a variable name: refused anyway. */
		rc = try(refused[i]);
		ck_assert_msg(rc == -1, "Variable-%s taken (%d)", refused[i],
		    rc);
	}
}
END_TEST

/* core: the names an authorizer means to pass still pass. */
START_TEST(authvar_allowed)
{
	static const char *const allowed[] = {
		"AUTH_USER", "AUTH_ROLE", "USER_ID", "MY_APP_TENANT",
		"TENANT", "X_PHONE", "AUTH_GIT_USER", NULL
	};
	size_t	 i;
	int	 rc;

	start();
	for (i = 0; allowed[i] != NULL; i++) {
		rc = try(allowed[i]);
		ck_assert_msg(rc == 0, "Variable-%s refused (%d)", allowed[i],
		    rc);
	}
}
END_TEST

static Suite *
authvar_suite(void)
{
	Suite	*s = suite_create("authvar");

	suite_add_case(s, "core", setup, teardown, 60, authvar_refused,
	    authvar_allowed, NULL);
	return s;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return suite_run(authvar_suite());
}
