/*
 * req_state.c: what request.c (a request's life and input) and response.c
 * (its answer) both stand on: the steps of a request's two machines
 * (request.h), the application's letting go of it, and its growable
 * buffers.  It calls neither.
 */
#include <sys/types.h>

#include <stdlib.h>

#include "log.h"
#include "req_struct.h"

static const char *const req_in_names[] = { "params", "body", "done" };
static const char *const req_out_names[] = { "none", "header", "ended" };

/* The steps each machine has: bit (1 << to) of steps[from]. */
const unsigned req_in_steps[REQ_IN_N] = {
	[IN_PARAMS] = 1u << IN_BODY,
	[IN_BODY] = 1u << IN_DONE,
	[IN_DONE] = 0
};
const unsigned req_out_steps[REQ_OUT_N] = {
	[OUT_NONE] = 1u << OUT_HEADER | 1u << OUT_ENDED,
	[OUT_HEADER] = 1u << OUT_ENDED,
	[OUT_ENDED] = 0
};

int
req_step_refused(const struct evfcgi_req *r, int out, unsigned to)
{
	const char *const	*names = out ? req_out_names : req_in_names;

	log_err("%s: request %u: %s: no step from %s to %s",
	    r->r_link->rl_peer, r->r_h.h_id, out ? "output" : "input",
	    names[out ? r->r_h.h_out : r->r_h.h_in], names[to]);
	return -1;
}

void
req_ended_log(const struct evfcgi_req *r)
{
	if (log_enabled(LOG_DEBUG))
		log_debug("%s: request %u: answer ended, input %s",
		    r->r_link->rl_peer, r->r_h.h_id, req_in_names[r->r_h.h_in]);
}

void
req_release_app(struct evfcgi_req *r)
{
	evfcgi_abort_cb	 fn = r->r_abort;
	int		 held = r->r_h.h_app;

	r->r_h.h_app = 0;
	r->r_abort = NULL;
	r->r_st.s_cb = NULL;
	if (!held || fn == NULL)
		return;
	r->r_app_locked = 1;
	fn(r, r->r_abort_arg);
	r->r_app_locked = 0;
	/* What it set meanwhile is not called: the application let go. */
	r->r_abort = NULL;
	r->r_st.s_cb = NULL;
	r->r_prod.p_fn = NULL;
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
