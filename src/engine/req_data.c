/*
 * req_data.c: a filter's second input stream, FCGI_DATA (FastCGI 1.0
 * 6.4): the file the web server filters, after STDIN or beside it.  It is
 * held and capped as a body that is not streamed is (req_body_cap(), the
 * global input cap), and checked against FCGI_DATA_LENGTH.  Above
 * request.c: conn_input.c calls it; it calls request.c and response.c.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "req_struct.h"

static void	req_data_refuse(struct evfcgi_req *, int, const char *,
		    uint64_t);

/* Refuses r for its DATA (req_refuse()), letting go of what it held. */
static void
req_data_refuse(struct evfcgi_req *r, int status, const char *why,
    uint64_t limit)
{
	r->r_h.h_data_open = 0;
	evbuffer_drain(r->r_dat.d_buf, evbuffer_get_length(r->r_dat.d_buf));
	req_refuse(r, status, why, limit);
}

int
req_data_begin(struct evfcgi_req *r)
{
	const char		*dl;
	char			*end;
	unsigned long long	 n;

	if (r->r_dat.d_buf == NULL && (r->r_dat.d_buf = evbuffer_new()) == NULL)
		return -1;
	r->r_h.h_data_open = 1;
	r->r_dat.d_len = -1;
	if ((dl = evfcgi_param(r, "FCGI_DATA_LENGTH")) == NULL || *dl == '\0')
		return 0;
	errno = 0;
	n = strtoull(dl, &end, 10);
	if (errno != 0 || *end != '\0' || *dl < '0' || *dl > '9') {
		req_data_refuse(r, 400, "bad FCGI_DATA_LENGTH", 0);
		return 0;
	}
	if (n > req_body_cap(r)) {
		req_data_refuse(r, 413, "filter data above the limit",
		    req_body_cap(r));
		return 0;
	}
	r->r_dat.d_len = (long long)n;
	return 0;
}

int
req_data_add(struct evfcgi_req *r, const void *p, size_t len)
{
	size_t	 have = evbuffer_get_length(r->r_dat.d_buf);

	if (have + len > req_body_cap(r)) {
		req_data_refuse(r, 413, "filter data above the limit",
		    req_body_cap(r));
		return 0;
	}
	if (r->r_dat.d_len >= 0 && have + len > (uint64_t)r->r_dat.d_len) {
		req_data_refuse(r, 400, "filter data past FCGI_DATA_LENGTH", 0);
		return 0;
	}
	if (req_charge(r, &r->r_dat.d_charged, len) == -1) {
		req_data_refuse(r, 503, "input held by all requests at its limit",
		    r->r_link->rl_env->re_lim->max_input);
		return 0;
	}
	return evbuffer_add(r->r_dat.d_buf, p, len);
}

void
req_data_end(struct evfcgi_req *r)
{
	r->r_h.h_data_open = 0;
	if (r->r_dat.d_len >= 0 &&
	    evbuffer_get_length(r->r_dat.d_buf) != (uint64_t)r->r_dat.d_len)
		req_data_refuse(r, 400, "filter data short of FCGI_DATA_LENGTH", 0);
}
