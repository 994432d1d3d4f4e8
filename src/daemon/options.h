/*
 * options.h: evfcgid's options, from a --config file and the command line
 * (which overrides the file), and --help.  The daemon's alone: not part of
 * libevfcgi.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stddef.h>

#include "app.h"
#include "cgi.h"
#include "evfcgi.h"

#define MAX_LISTEN	16
#define MAX_WORKERS	64

/* Everything the options set. */
struct config {
	struct evfcgi_limits	 lim;
	struct app_config	 app;
	const char		*listen[MAX_LISTEN];
	const char		*listen_who[MAX_LISTEN]; /* file:line */
	size_t			 nlisten;
	int			 listen_from_file; /* argv replaces */
	long			 mode;
	const char		*socket_owner;	/* unix sockets: chown */
	const char		*socket_group;
	const char		*allow;		/* peers let in, or NULL */
	int			 allow_from_file; /* argv replaces */
	const char		*user;		/* drop root to them */
	const char		*group;
	int			 allow_root;
	const char		*access_log;
	const char		*log_file;
	int			 level;
	int			 use_syslog;
	int			 workers;
	const char		*backend;	/* NULL: libevent's choice */
	const char		*config;	/* --config, or NULL */
	int			 cgi_on;	/* --cgi: run CGI programs */
	const char		*cgi_user;	/* programs run as them */
	struct cgi_config	 cgi;
};

/* What options_parse and the parsers in options.c return to go on. */
#define OPTIONS_GO_ON	(-1)

/*
 * Fills cfg with the defaults, then the --config file's options if one is
 * given, then the command line's, and checks them together.  Returns
 * OPTIONS_GO_ON to run, else the status to exit with (0 after --help or
 * --version, 2 after a message on stderr for a bad option, naming
 * file:line for the file).
 */
int	options_parse(int argc, char **argv, struct config *cfg);

/*
 * How a message names option name (long, no dashes) as it was last set:
 * "FILE:LINE: name" from the config file, else "--name".  The string
 * lives until the next call.
 */
const char *options_who(const char *name);

/* Whether option name (long, no dashes) was given, in the file or argv. */
int	options_given(const char *name);

#endif /* OPTIONS_H */
