// SPDX-License-Identifier: GPL-2.0
/*
 * The events 'perf refleak' takes (see refleak-events.h).
 */
#include <string.h>

#include <linux/kernel.h>

#include "util/refleak-events.h"
#include "util/bpf_skel/refleak_data.h"

static const struct refleak_ev_fields rl_alloc = {
	.obj = "ptr", .caller = "call_site", .bytes = "bytes_alloc", .bytes_req = "bytes_req",
	.cache = "name",
};

static const struct refleak_ev_fields rl_free = {
	.obj = "ptr", .caller = "call_site", .cache = "name",
};

static const struct refleak_ev_fields rl_final_put = {
	.obj = "ref", .caller = "caller", .counter_kind = "kind",
};

static const struct refleak_ev_fields rl_set = {
	.obj = "ref", .caller = "caller", .value = "count", .counter_kind = "kind",
};

static const struct refleak_ev_fields rl_anomaly = {
	.obj = "ref", .caller = "caller", .value = "type", .counter_kind = "kind",
};

static const struct refleak_ev_fields rl_ref = {
	.obj = "ref", .caller = "caller", .value = "old", .delta = "delta", .counter_kind = "kind",
};

/* name, kind, fields, the kind record -b's programs give it (-1: none), old name */
const struct refleak_event refleak_events[] = {
	{ "kmem:kmalloc", REFLEAK_EV_KMALLOC, &rl_alloc, RL_BPF_KMALLOC, false },
	{ "kmem:kmem_cache_alloc", REFLEAK_EV_CACHE_ALLOC, &rl_alloc, RL_BPF_CACHE_ALLOC, false },
	{ "kmem:kfree", REFLEAK_EV_KFREE, &rl_free, RL_BPF_KFREE, false },
	{ "kmem:kmem_cache_free", REFLEAK_EV_CACHE_FREE, &rl_free, RL_BPF_CACHE_FREE, false },
	{ "kmem:kfree_rcu", REFLEAK_EV_KFREE_RCU, &rl_free, RL_BPF_KFREE_RCU, false },
	{ REFLEAK_PUT_TP, REFLEAK_EV_FINAL_PUT, &rl_final_put, RL_BPF_FINAL_PUT, false },
	{ REFLEAK_SET_TP, REFLEAK_EV_SET, &rl_set, RL_BPF_SET, false },
	{ "ref_trace:ref_trace_anomaly", REFLEAK_EV_ANOMALY, &rl_anomaly, RL_BPF_ANOMALY, false },
	{ REFLEAK_REF_TP, REFLEAK_EV_REF, &rl_ref, RL_BPF_REF, false },
	{ "kmem:kmalloc_node", REFLEAK_EV_KMALLOC, &rl_alloc, -1, true },
	{ "kmem:kmem_cache_alloc_node", REFLEAK_EV_CACHE_ALLOC, &rl_alloc, -1, true },
};

const unsigned int refleak_nr_events = ARRAY_SIZE(refleak_events);

const struct refleak_event *refleak_event__find(const char *name)
{
	unsigned int i;

	for (i = 0; name && i < ARRAY_SIZE(refleak_events); i++)
		if (!strcmp(name, refleak_events[i].name))
			return &refleak_events[i];
	return NULL;
}

const struct refleak_event *refleak_event__of_bpf(int bpf_kind)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(refleak_events); i++)
		if (refleak_events[i].bpf_kind == bpf_kind)
			return &refleak_events[i];
	return NULL;
}
