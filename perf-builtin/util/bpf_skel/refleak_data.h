/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What refleak.bpf.c keeps in its maps, read by util/bpf_refleak.c at the
 * end of 'perf refleak record -b'.
 */
#ifndef __PERF_REFLEAK_DATA_H
#define __PERF_REFLEAK_DATA_H

/* counters followed per object, as util/refleak.c's REFLEAK_MAX_COUNTERS */
#define RL_BPF_MAX_CTRS		4
/* counter events kept per object; later ones are counted as missed */
#define RL_BPF_LOG		16
/* allocations remembered per CPU, to find the object of a counter born */
#define RL_BPF_RECENT		32
#define RL_BPF_CACHE_NAME	32
/* programs that may run nested on a CPU: a task's, a softirq's, an interrupt's */
#define RL_BPF_LEVELS		3
/* kernel frames kept per stack */
#define RL_BPF_MAX_STACK	64
/*
 * gets and puts kept per object: the first RL_BPF_REFS - 1 and the latest,
 * whose count before it then tells the report that some are missing
 */
#define RL_BPF_REFS		512
/* record -b --refs: the caches' globs at the most */
#define RL_BPF_REFS_GLOBS	8
/* balanced objects kept whole per allocation site, stack and shape, the latest */
#define RL_BPF_SAMPLES		8

/* the tracepoint an event came from: the sample written for it */
enum rl_bpf_ev_kind {
	RL_BPF_KMALLOC,
	RL_BPF_CACHE_ALLOC,
	RL_BPF_KFREE,
	RL_BPF_CACHE_FREE,
	RL_BPF_KFREE_RCU,
	RL_BPF_SET,
	RL_BPF_FINAL_PUT,
	RL_BPF_ANOMALY,
	RL_BPF_NR_EV_KINDS,
	/*
	 * A get or a put (ref_trace_ref): taken by one program, rl_ref(),
	 * of the objects followed alone.  What it misses is not counted
	 * with the events above: a missed one is a count that does not
	 * follow in its object's gets and puts.
	 */
	RL_BPF_REF = RL_BPF_NR_EV_KINDS,
};

/* what could not be kept: each turns the verdicts it touches uncertain */
enum rl_bpf_miss {
	RL_BPF_MISS_OBJECTS,	/* the live object map was full */
	RL_BPF_MISS_COUNTERS,	/* the counter map was full */
	RL_BPF_MISS_LOG,	/* an object had more counter events than its log */
	RL_BPF_MISS_REPORTS,	/* the map of objects to report was full */
	RL_BPF_MISS_SITES,	/* the site map was full */
	RL_BPF_MISS_STACKS,	/* a stack not taken, or the stack map full */
	RL_BPF_MISS_NESTED,	/* an event no program took (nested too deep) */
	RL_BPF_MISS_PROCS,	/* the process map was full */
	RL_BPF_NR_MISSES,
};

/* a kernel stack, kept in the stack map under a hash of its frames */
struct rl_bpf_stack {
	u32	nr;
	u32	pad;
	u64	ips[RL_BPF_MAX_STACK];
};

struct rl_bpf_ev {
	u64	time;
	u64	caller;
	u64	stack;		/* its key in the stack map, 0: none */
	u32	pid;
	u32	tid;
	s32	value;		/* set: the count; anomaly: its type; ref: the count before */
	u32	offset;		/* the counter's offset in the object */
	__u16	cpu;
	u8	kind;		/* enum rl_bpf_ev_kind */
	u8	ctr_kind;	/* enum ref_trace_kind */
	s32	delta;		/* ref: references taken, or dropped (< 0) */
};

enum rl_bpf_ctr_state {
	RL_BPF_CTR_LIVE,
	RL_BPF_CTR_ZERO,
	RL_BPF_CTR_RETIRED,
};

struct rl_bpf_ctr {
	u32	offset;
	u8	state;		/* enum rl_bpf_ctr_state */
	u8	nr_puts;	/* final puts since its last birth */
	__u16	pad;
};

enum rl_bpf_obj_flags {
	RL_BPF_OBJ_ANOMALY	= 1,	/* an anomaly on one of its counters */
	RL_BPF_OBJ_LATE		= 2,	/* a counter event after its free */
	RL_BPF_OBJ_FREED	= 4,
	RL_BPF_OBJ_ORPHAN	= 8,	/* an anomaly on no object: ptr is the counter */
};

struct rl_bpf_obj {
	/* the allocation */
	u64	ptr;
	u64	size;
	u64	call_site;
	u64	cache;		/* struct kmem_cache *, 0 for kmalloc */
	u64	time;
	u64	last_put;	/* the time of its last final put */
	u64	stack;
	u32	pid;
	u32	tid;
	__u16	cpu;
	u8	kind;		/* RL_BPF_KMALLOC or RL_BPF_CACHE_ALLOC */
	u8	flags;
	/* the free, with RL_BPF_OBJ_FREED */
	struct rl_bpf_ev free;
	u8	nr_ctrs;
	u8	nr_log_at_free;	/* the log's events before the free */
	u8	refs_wanted;	/* --refs: its cache's gets and puts followed (1) or not (2) */
	u8	pad;
	u32	nr_log;		/* counter events, some perhaps not kept */
	u32	nr_refs;	/* gets and puts, RL_BPF_REFS of them kept at the most */
	u32	sample;		/* 1 + its slot among its site's samples; 0: none */
	u64	id;		/* its gets and puts are kept under it (refs) */
	u64	shape;		/* a bit for each stack that got or put it, of 64 */
	struct rl_bpf_ctr ctrs[RL_BPF_MAX_CTRS];
	struct rl_bpf_ev log[RL_BPF_LOG];
};

/*
 * A process forked in the recording, or from before it and needed: what
 * perf's fork, comm and exit records would have said of it.
 */
struct rl_bpf_proc {
	u64	fork_ns;	/* 0: forked before the recording */
	u64	exit_ns;	/* 0: running */
	s64	nr_objects;	/* objects followed it allocated, and gets of them kept */
	s64	nr_children;	/* its children in the map */
	u32	ppid;
	u32	pad;
	char	comm[16];
};

/* balanced objects, summed per allocation site and stack */
struct rl_bpf_site_key {
	u64	call_site;
	u64	cache;
	u64	stack;
};

struct rl_bpf_site {
	u64	nr_balanced;
	u64	nr_died;		/* every counter at zero when freed */
	u64	died_first_ns;		/* ... allocated first */
	u64	died_last_ns;		/* ... allocated last */
	u64	max_life_ns;
	u64	nr_freed_after_zero;
	u64	nr_freed_live_ctr;
	u64	nr_freed_all_zero;	/* several counters, all at zero */
	u64	max_freed_put_ns;
	u64	max_put_free_ns;
	u32	put_offset;		/* the offset of the first final put */
	u32	nr_puts_at_offset;
};

/* an object's get or put: the object's id, the number of the event in it */
struct rl_ref_key {
	u64	id;
	u32	nr;
	u32	pad;
};

/*
 * One of the balanced objects of a site kept whole: by its allocation
 * site and stack and its shape, the stacks that got and put it, so that
 * what the site's objects do most does not crowd out what fewer of them do
 */
struct rl_sample_key {
	struct rl_bpf_site_key	site;
	u64			shape;
	u32			slot;	/* < RL_BPF_SAMPLES */
	u32			pad;
};

struct rl_bpf_alloc {
	u64	ptr;
	u64	size;
	u64	call_site;
	u64	cache;
	u64	time;
	u32	pid;
	u32	tid;
	__u16	cpu;
	u8	kind;
	u8	followed;	/* a counter was born in it */
	u64	stack_key;	/* its stack, kept in alloc_stacks already; 0: in stack */
	struct rl_bpf_stack stack;	/* taken now, kept if a counter is born in it */
};

/*
 * The programs running on a CPU (see rl_take()): how deep (a softirq may run
 * one inside a task's, and an interrupt inside the softirq's), and the
 * events they saw and took.
 */
struct rl_cpu {
	u32	depth;
	u32	pad;
	u64	last_ns;	/* the last time given to an event */
	u64	seen[RL_BPF_NR_EV_KINDS];	/* events that fired */
	u64	handled[RL_BPF_NR_EV_KINDS];	/* ... that a program took */
	u64	taken_by[RL_BPF_LEVELS];	/* ... the first, second, third */
	u64	stacks_walked;	/* stacks the kernel unwound */
	u64	stacks_known;	/* ... and those found by their return addresses */
};

struct rl_bpf_recent {
	u32	next;
	u32	pad;
	struct rl_bpf_alloc alloc[RL_BPF_RECENT];
};

#endif /* __PERF_REFLEAK_DATA_H */
