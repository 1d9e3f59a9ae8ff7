/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_BPF_REFLEAK_H
#define __PERF_BPF_REFLEAK_H

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/compiler.h>
#include <linux/types.h>

#include "util/bpf_skel/refleak_data.h"

struct evlist;
struct perf_session;

/*
 * perf refleak record -b: BPF programs follow refcounted objects in the
 * kernel, and at the end of the recording the objects not balanced, and
 * the sums of the balanced ones, are written into it as samples.
 */

/* the event whose samples carry the sums and the misses */
#define REFLEAK_BPF_EVENT	"refleak-bpf"
#define REFLEAK_BPF_DEFAULT_ENTRIES	65536

enum refleak_bpf_rec_type {
	REFLEAK_BPF_REC_SITE = 1,
	REFLEAK_BPF_REC_MISSES,
	REFLEAK_BPF_REC_END,
};

/*
 * The balanced objects of one allocation site and stack (raw data): the
 * sum as the programs keep it in their map (refleak_data.h), and the
 * allocation stack's kernel frames
 */
struct refleak_bpf_site_rec {
	u32	type;
	u32	nr_ips;
	u64	call_site;
	char	cache[RL_BPF_CACHE_NAME];
	struct rl_bpf_site sum;
	u64	ips[];
};

/* what the programs could not keep (raw data) */
struct refleak_bpf_misses_rec {
	u32	type;
	u32	pad;
	u64	first_ns;
	u64	last_ns;
	u64	nr[RL_BPF_NR_MISSES];	/* enum rl_bpf_miss */
	u64	nr_unplaced_sets;
};

/*
 * The end of the recording, the time the programs stopped: its sample's.
 * Balanced objects write nothing, so the last object written may be long
 * before it, and before the exits the verdicts count from.  @counting_ns:
 * when the programs began to count, after loading (0: not said).
 */
struct refleak_bpf_end_rec {
	u32	type;
	u32	flags;		/* REFLEAK_BPF_END_* */
	u64	counting_ns;
};

/* the state at a checkpoint, while the recording went on */
#define REFLEAK_BPF_END_CHECKPOINT	1

struct refleak_bpf_opts {
	unsigned int	nr_entries;	/* live objects followed */
};

/* perf refleak top: the objects followed now, of one allocation site */
struct refleak_bpf_site_now {
	u64	call_site;
	u64	cache;		/* struct kmem_cache *, 0: kmalloc() */
	u64	nr_objects;
	u64	oldest_ns;	/* the allocation of the oldest, CLOCK_MONOTONIC */
	char	cache_name[RL_BPF_CACHE_NAME];
};

#ifdef HAVE_BPF_SKEL
static inline bool refleak_bpf_built(void)
{
	return true;
}

/* perf record --refleak-bpf=<nr_entries>: load the programs; 0 or -1 */
int refleak_bpf_prepare(struct evlist *evlist, unsigned int nr_entries);
ssize_t refleak_bpf_write(struct perf_session *session);
ssize_t refleak_bpf_checkpoint(struct perf_session *session);
int refleak_bpf_top_start(const struct refleak_bpf_opts *opts);
ssize_t refleak_bpf_top_read(struct refleak_bpf_site_now **sites, u64 *missed);
void refleak_bpf_top_stop(void);
#else
/* a perf without BPF skeletons: neither record -b nor top */
static inline bool refleak_bpf_built(void)
{
	return false;
}

static inline int refleak_bpf_prepare(struct evlist *evlist __maybe_unused,
				      unsigned int nr_entries __maybe_unused)
{
	return -EOPNOTSUPP;	/* refleak record -b says why before */
}

static inline ssize_t refleak_bpf_write(struct perf_session *session __maybe_unused)
{
	return 0;
}

static inline ssize_t refleak_bpf_checkpoint(struct perf_session *session __maybe_unused)
{
	return 0;
}

static inline int refleak_bpf_top_start(const struct refleak_bpf_opts *opts __maybe_unused)
{
	return -EOPNOTSUPP;
}

static inline ssize_t refleak_bpf_top_read(struct refleak_bpf_site_now **sites __maybe_unused,
					   u64 *missed __maybe_unused)
{
	return -EOPNOTSUPP;
}

static inline void refleak_bpf_top_stop(void)
{
}
#endif

#endif /* __PERF_BPF_REFLEAK_H */
