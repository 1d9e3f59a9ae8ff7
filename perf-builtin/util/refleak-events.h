/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_REFLEAK_EVENTS_H
#define __PERF_REFLEAK_EVENTS_H
/*
 * The events 'perf refleak' takes, by tracepoint: what each is to the
 * correlation and the names of the fields it reads of it.  The report
 * reads the samples of a recording through this table, and 'record -b'
 * writes what its programs kept as samples of the same tracepoints, in
 * the same fields, through it too.
 */
#include <stdbool.h>

/* the ones messages name */
#define REFLEAK_PUT_TP		"ref_trace:ref_trace_final_put"
#define REFLEAK_SET_TP		"ref_trace:ref_trace_set"
#define REFLEAK_REF_TP		"ref_trace:ref_trace_ref"

enum refleak_ev_kind {
	REFLEAK_EV_KMALLOC,
	REFLEAK_EV_CACHE_ALLOC,
	REFLEAK_EV_KFREE,
	REFLEAK_EV_CACHE_FREE,
	REFLEAK_EV_KFREE_RCU,
	REFLEAK_EV_FINAL_PUT,
	REFLEAK_EV_SET,
	REFLEAK_EV_ANOMALY,
	REFLEAK_EV_REF,
	REFLEAK_EV_NR,
};

/* the fields of an event, by name in its format; NULL: the event has none */
struct refleak_ev_fields {
	const char	*obj;		/* the object (kmem), the counter (ref_trace) */
	const char	*caller;
	const char	*bytes;		/* what the slab gave */
	const char	*bytes_req;	/* what was asked: written by -b, not read */
	const char	*cache;		/* the slab cache's name */
	const char	*value;		/* set: the count; anomaly: its type; ref: the old count */
	const char	*delta;		/* ref: the change */
	const char	*counter_kind;	/* ref_trace: the counter's type */
};

struct refleak_event {
	const char			*name;		/* sys:name */
	enum refleak_ev_kind		kind;
	const struct refleak_ev_fields	*fields;
	int				bpf_kind;	/* enum rl_bpf_ev_kind; -1: not with -b */
	bool				old_name;	/* a kernel before 6.1's, only read */
};

extern const struct refleak_event refleak_events[];
extern const unsigned int refleak_nr_events;

const struct refleak_event *refleak_event__find(const char *name);
/* the event record -b's programs take as @bpf_kind; NULL: none */
const struct refleak_event *refleak_event__of_bpf(int bpf_kind);

#endif /* __PERF_REFLEAK_EVENTS_H */
