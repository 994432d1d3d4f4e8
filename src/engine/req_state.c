/*
 * req_state.c: what request.c (a request's life and input) and response.c
 * (its answer) both stand on: the steps of a request's state, and its
 * growable buffers.  It calls neither.
 */
#include <sys/types.h>

#include <stdlib.h>

#include "log.h"
#include "request.h"

static const char *const req_state_names[] = {
	"params", "stdin", "handler", "drain", "done"
};

/* allowed[from] has bit (1 << to) for each step the lifecycle has. */
static const unsigned req_steps[] = {
	[REQ_PARAMS] = 1u << REQ_STDIN,
	[REQ_STDIN] = 1u << REQ_HANDLER | 1u << REQ_DRAIN,
	[REQ_HANDLER] = 1u << REQ_DONE | 1u << REQ_DRAIN,
	[REQ_DRAIN] = 0,
	[REQ_DONE] = 0
};

int
req_set_state(struct evfcgi_req *r, enum req_state s)
{
	if ((req_steps[r->r_state] & (1u << s)) == 0) {
		log_err("%s: request %u: no step from %s to %s",
		    r->r_link->rl_peer, r->r_id, req_state_names[r->r_state],
		    req_state_names[s]);
		return -1;
	}
	if (log_enabled(LOG_DEBUG))
		log_debug("%s: request %u: %s -> %s", r->r_link->rl_peer,
		    r->r_id, req_state_names[r->r_state], req_state_names[s]);
	if (s == REQ_DRAIN || s == REQ_DONE)
		r->r_link->rl_env->re_st->requests_active--;
	r->r_state = s;
	return 0;
}

int
req_buf_reserve(struct req_buf *b, size_t n)
{
	size_t	 cap = b->b_cap > 0 ? b->b_cap : 256;
	char	*p;

	if (n <= b->b_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	if ((p = realloc(b->b_p, cap)) == NULL)
		return -1;
	b->b_p = p;
	b->b_cap = cap;
	return 0;
}
