/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_REFLEAK_H
#define __PERF_REFLEAK_H
/*
 * Correlation engine for 'perf refleak': matches slab allocations and frees
 * (kmem tracepoints) with the life cycle of the reference counters inside
 * the objects (ref_trace:ref_trace_set, ref_trace_final_put and
 * ref_trace_anomaly) and with the exits of the tasks that allocated them;
 * with ref_trace_ref (every get and put, for the caches a recording chose)
 * it also names the references a leaked object was never put
 * (refleak-refs.c).
 * It knows nothing about perf.data: the caller feeds it time ordered events
 * and reads back aggregated verdicts, each class in a tier of evidence.
 *
 * Memory grows with the number of live objects (plus a bounded "graveyard"
 * of recently freed objects used to detect puts after free), with the
 * number of distinct (class, allocation site) groups and with the number of
 * distinct call stacks, not with the number of events.
 */
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include "refleak-stacks.h"

/* in report order: definite findings, likely leaks, then what is only possible */
enum refleak_class {
	REFLEAK_PUT_AFTER_FREE,
	REFLEAK_DOUBLE_PUT,
	REFLEAK_UNDERFLOW,
	REFLEAK_GET_FROM_ZERO,
	REFLEAK_DEC_TO_ZERO,
	REFLEAK_SATURATED,
	REFLEAK_FINAL_PUT_NOT_FREED,
	REFLEAK_LIKELY_LEAK,
	REFLEAK_FREED_WITHOUT_FINAL_PUT,
	REFLEAK_PUT_NOT_FREED_YET,
	REFLEAK_OUTSTANDING,
	REFLEAK_BALANCED,
	REFLEAK_NR_CLASSES,
};

/*
 * How much a class can be trusted, see Documentation/perf-refleak.txt:
 * definite findings are misuses the kernel itself detected or a final put
 * not followed by a free; a likely leak is a live object whose counter never
 * reached zero while the recording says nothing is left to put it (enum
 * refleak_evidence); possible ones need more than this recording to decide,
 * and are listed only on request.
 */
enum refleak_tier {
	REFLEAK_TIER_DEFINITE,
	REFLEAK_TIER_LIKELY,
	REFLEAK_TIER_POSSIBLE,
	REFLEAK_TIER_NONE,
	REFLEAK_NR_TIERS,
};

/* values of ref_trace_anomaly's type (enum refcount_saturation_type) */
enum refleak_anomaly {
	REFLEAK_ANOMALY_ADD_NOT_ZERO_OVF,
	REFLEAK_ANOMALY_ADD_OVF,
	REFLEAK_ANOMALY_ADD_UAF,
	REFLEAK_ANOMALY_SUB_UAF,
	REFLEAK_ANOMALY_DEC_LEAK,
	REFLEAK_NR_ANOMALIES,
};

/* the counter types of ref_trace's kind field, as a recording names them */
enum refleak_counter {
	REFLEAK_COUNTER_UNKNOWN,	/* not said: a kernel whose event has no kind */
	REFLEAK_COUNTER_REFCOUNT,	/* refcount_t, kref */
	REFLEAK_COUNTER_PERCPU_REF,
	REFLEAK_COUNTER_FILE_REF,
	REFLEAK_COUNTER_RCUREF,
	REFLEAK_NR_COUNTERS,
};

enum refleak_stack_kind {
	REFLEAK_STACK_ALLOC,
	REFLEAK_STACK_PUT,
	REFLEAK_STACK_FREE,
	REFLEAK_NR_STACK_KINDS,
};

/*
 * What made a live object a likely leak (several may hold for one object),
 * see rl_mark_likely():
 *   OWNER_EXITED   the process that allocated it exited, min-age before the
 *                  end, and so did every process it forked after that
 *   SIBLINGS_DIED  objects of its allocation stack reached zero and were
 *                  freed within a lifetime it has long outlived, and the
 *                  survivors kept accumulating while its siblings came and went
 *   COUNTER_LEFT   one of its counters reached zero, another never did, while
 *                  its site's other objects took every counter to zero and
 *                  were freed
 *   PAST_LAST_PUT  (gets and puts recorded) one of its counters got, min-age
 *                  before the end, the put that was the last one of the
 *                  site's balanced objects, and still holds references
 *                  that processes gone took
 *   CALL_REF_HELD  (gets and puts recorded) it holds, long after, a reference
 *                  that the site's balanced objects always put in the call
 *                  that took it
 */
enum refleak_evidence {
	REFLEAK_EVIDENCE_OWNER_EXITED,
	REFLEAK_EVIDENCE_SIBLINGS_DIED,
	REFLEAK_EVIDENCE_COUNTER_LEFT,
	REFLEAK_EVIDENCE_PAST_LAST_PUT,
	REFLEAK_EVIDENCE_CALL_REF_HELD,
	REFLEAK_NR_EVIDENCE,
};

/* JSON key / table title of a class */
const char *refleak_class__name(enum refleak_class class);
/* one line on what a class means; what its age column measures */
const char *refleak_class__help(enum refleak_class class);
const char *refleak_class__age(enum refleak_class class);
const char *refleak_stack_kind__name(enum refleak_stack_kind kind);
/* the C type of a counter ("file_ref_t"), and the counter of ref_trace's kind value's name */
const char *refleak_counter__name(enum refleak_counter counter);
enum refleak_counter refleak_counter__of_kind(const char *kind);
enum refleak_tier refleak_class__tier(enum refleak_class class);
const char *refleak_tier__name(enum refleak_tier tier);
/* JSON key / text name of an evidence */
const char *refleak_evidence__name(enum refleak_evidence ev);

/* Name used for the cache of kmalloc() allocations */
#define REFLEAK_KMALLOC "kmalloc"
/* The slab cache of struct file */
#define REFLEAK_FILE_CACHE "filp"

struct refleak_config {
	/*
	 * final_put_not_freed only once the put is at least this old at the
	 * end; likely_leak only once the object and the exit of the process
	 * that allocated it are at least this old
	 */
	u64	min_age_ns;
	/* likely_leak: at least that many objects of one allocation stack */
	u32	min_repeat;
	/*
	 * likely_leak by siblings_died: live at least that many times as
	 * long as the longest life of the stack's objects that were freed
	 */
	u32	sibling_factor;
	/* how long / how many freed objects are kept to detect put after free */
	u64	graveyard_ns;
	u32	graveyard_max;
	/* keep per object records for the --objects listing */
	bool	keep_objects;
	/* at most that many object records per (class, site) group */
	u32	max_objects_per_group;
	/*
	 * The function a kernel address is in, for what the frames of a
	 * stack are (refleak-stacks.h): the pairing of gets with puts and
	 * the holders of a leak compare functions, and look past the tracing
	 * and counting machinery and below interrupt entries.  NULL: every
	 * address is a function of its own.
	 */
	refleak_symbol_fn	symbol;
	void			*symbol_ctx;
};

#define REFLEAK_DEFAULT_MIN_AGE_NS	(1000ULL * 1000 * 1000)
#define REFLEAK_DEFAULT_GRAVEYARD_NS	(10ULL * 1000 * 1000 * 1000)
#define REFLEAK_DEFAULT_GRAVEYARD_MAX	(256 * 1024)
#define REFLEAK_DEFAULT_MAX_OBJECTS	1024
#define REFLEAK_DEFAULT_MIN_REPEAT	2
#define REFLEAK_DEFAULT_SIBLING_FACTOR	10

void refleak_config__init(struct refleak_config *cfg);

/* Events.  A stack id of 0 means "no callchain". */
struct refleak_alloc_ev {
	u64		time;
	u64		ptr;
	u64		bytes_alloc;
	u64		call_site;
	const char	*cache;		/* slab cache name, NULL or REFLEAK_KMALLOC */
	u32		stack;
	int		pid;		/* process that allocated, -1 unknown */
	int		tid;		/* its thread */
	/*
	 * Outside the report's filters (--time, --pid, --tid, --comm): the
	 * object is followed (its address, counters and free correlate the
	 * other events) but gets no verdict and is not counted.
	 */
	bool		filtered;
};

struct refleak_free_ev {
	u64		time;
	u64		ptr;
	u64		call_site;
	const char	*cache;		/* kmem_cache_free name, NULL for kfree */
	u32		stack;
	/*
	 * kmem:kfree_rcu: the owner gave the object up, the allocator frees
	 * it after a grace period (possibly long after, see
	 * Documentation/trace/events-kmem.rst).  The object is judged as
	 * freed here; the free event that follows is expected and ignored.
	 */
	bool		deferred;
};

struct refleak_put_ev {
	u64		time;
	u64		obj;		/* address of the refcount */
	u64		caller;
	u32		stack;
	int		pid;		/* of the task that put it, 0: not known */
};

/* ref_trace_set: a counter born (count > 0), revived, or retired (count 0) */
struct refleak_set_ev {
	u64		time;
	u64		obj;		/* address of the refcount */
	s64		count;
	u64		caller;
	u32		stack;
	int		pid;		/* of the task that set it, 0: not known */
};

/* ref_trace_anomaly: a counter caught a misuse */
struct refleak_anomaly_ev {
	u64			time;
	u64			obj;	/* address of the counter */
	enum refleak_anomaly	type;
	enum refleak_counter	counter;
	u64			caller;
	u32			stack;
};

/* ref_trace_ref: a get (delta > 0), or a put that left references */
struct refleak_ref_ev {
	u64			time;
	u64			obj;		/* address of the refcount */
	s32			old;		/* references it held before */
	s32			delta;
	enum refleak_counter	counter;
	u64			caller;
	u32			stack;
	int			pid;		/* of the task that took or dropped it */
};

/* a stack that took references that were never put */
struct refleak_unput_stack {
	u32	stack;		/* 0: taken before the recording, or by no traced path */
	s64	balance;	/* gets there not paired with a put, per object */
	/* other stacks of the same get (its call and two callers) summed in */
	bool	merged;
};

/*
 * Objects of a group that left the same references unput.  certain: each
 * put paired with one get by the rules of refleak-refs.c, and stacks are
 * the gets left; otherwise stacks are every get that could own a missing
 * put, with their balance.
 */
struct refleak_unput {
	u64	nr_objects;
	u32	refs;		/* references never put, per object */
	bool	certain;
	bool	missing;	/* not certain because events are missing */
	u32	nr_stacks;
	struct refleak_unput_stack stacks[];
};

struct refleak_object {
	u64	addr;
	u64	size;
	u64	alloc_ns;	/* 0: allocated before the recording */
	u64	put_ns;		/* 0: no final put seen */
	u64	put2_ns;	/* second final put (double put) */
	u64	free_ns;	/* 0: not freed */
	u64	age_ns;		/* class specific, see refleak_group */
	int	pid;		/* allocating task, -1 or 0: unknown */
	int	tid;
	bool	inferred;
	bool	uncertain;
	u8	evidence;	/* likely_leak: bit (1 << enum refleak_evidence) */
};

struct refleak_site;
struct refleak_refs_site;
struct refleak_refs_group;
struct rl_offsets;

struct refleak_stack_count {
	u32	id;
	u64	count;
};

/*
 * One (class, allocation site) aggregate.  age is, per class:
 *   freed_without_final_put: lifetime (free - alloc)
 *   final_put_not_freed:     end of recording - final put
 *   likely_leak, outstanding: end of recording - alloc
 *   put_after_free:          put - free
 *   double_put:              second put - first put
 */
struct refleak_group {
	struct refleak_site	*site;
	enum refleak_class	class;
	u64			count;
	u64			bytes;
	u64			max_age_ns;
	u64			nr_inferred;
	u64			nr_uncertain;
	struct hashmap		*stacks[REFLEAK_NR_STACK_KINDS];
	struct refleak_object	*objects;
	u32			nr_objects;
	u32			alloc_objects;
	u64			objects_dropped;
	u64			nr_born;	/* objects whose counter was seen born */
	/* references never put (refleak-refs.c's, refleak_refs__unput()) */
	struct refleak_refs_group *refs;
	u64			nr_named;	/* objects whose gets were paired */
	/* likely_leak: objects each evidence holds for */
	u64			nr_evidence[REFLEAK_NR_EVIDENCE];
	/* the counter types its anomalies, gets and puts named: 1 << enum refleak_counter */
	u8			counters;
	/*
	 * The likely_leak group whose objects hold this one's references
	 * never put (they were taken where those objects are allocated):
	 * that group is the root to audit.  NULL: none found.
	 */
	struct refleak_group	*held_by;
};

struct refleak_site {
	u64			call_site;	/* 0: pseudo site for pre-existing objects */
	const char		*cache;		/* interned */
	bool			refcounted;	/* some object got a final put */
	bool			by_cache;	/* ... of the same slab cache, not this site */
	bool			offset_known;
	bool			offset_mixed;	/* puts seen at different offsets */
	bool			no_alloc;	/* pseudo site: anomalies on no known object */
	/*
	 * Frees of objects after their final put: the latest final put of
	 * an object freed, the longest delay from put to free
	 */
	u64			max_freed_put_ns;
	u64			max_put_free_ns;
	/*
	 * Frees of objects whose counter was seen born: with the counter
	 * still above zero, and after it reached zero.  A site that mostly
	 * frees with the counter live (sk_buff: skb_unref() does not
	 * decrement the last reference) gives no meaning to a counter that
	 * never reached zero.
	 */
	u64			nr_freed_live_ctr;
	u64			nr_freed_after_zero;
	/* ... of those, objects with several counters, every one at zero */
	u64			nr_freed_all_zero;
	u64			ref_offset;
	/* ref_trace_ref seen for this cache: gets and puts are followed */
	bool			refs_traced;
	/* what the balanced objects taught the pairing (refleak-refs.c's) */
	struct refleak_refs_site *refs;
	/* the offsets of the final puts seen in its cache's objects */
	struct rl_offsets	*cache_offsets;
	struct refleak_group	*groups[REFLEAK_NR_CLASSES];
	struct refleak_site	*next;		/* hash chain / list */
};

struct refleak_stats {
	u64	nr_alloc;
	u64	nr_free;
	u64	nr_put;
	u64	nr_set;
	u64	nr_anomaly;
	u64	nr_ref;			/* gets and puts (ref_trace_ref) */
	u64	nr_unmatched_ref;	/* ... on no known object */
	u64	nr_unmatched_set;	/* counter in no known allocation */
	u64	nr_revived;		/* counters set again after their final put */
	u64	nr_exits;		/* process exits seen */
	u64	nr_held_by_running;	/* live objects whose holders still run */
	u64	nr_forks;		/* process forks seen */
	u64	nr_ignored_alloc;	/* NULL / ERR_PTR */
	u64	nr_unmatched_free;	/* free of an address never seen allocated */
	u64	nr_unmatched_put;	/* final put on no known object (pre-existing) */
	u64	nr_inferred_matches;	/* unmatched puts later matched by offset */
	u64	nr_missed_free;		/* address reallocated without a free */
	u64	nr_rcu_requests;	/* kfree_rcu() requests */
	u64	nr_rcu_freed;		/* ... whose deferred free was seen */
	u64	nr_lost;
	u64	nr_lost_windows;
	u64	nr_out_of_order;
	u64	nr_pending_free;	/* final put younger than min-age, not freed */
	u64	nr_untracked;		/* objects of sites never seen refcounted */
	u64	nr_filtered;		/* objects outside --time/--pid/--tid/--comm */
	u64	nr_inferred;		/* objects with inferred verdicts */
	u64	nr_uncertain;		/* objects whose history overlaps lost events */
	u64	nr_live_end;
	u64	max_live;
	u64	first_ns;
	u64	last_ns;
	u64	class_count[REFLEAK_NR_CLASSES];
	u64	tier_count[REFLEAK_NR_TIERS];	/* objects (or orphan anomalies) */
	u64	nr_sites;
	u64	nr_refcounted_sites;
	u64	nr_stacks;
};

struct refleak;

struct refleak *refleak__new(const struct refleak_config *cfg);
void refleak__delete(struct refleak *rl);

/* Intern a callchain once per distinct stack; returns id > 0, 0 on error/empty */
u32 refleak__intern_stack(struct refleak *rl, const u64 *ips, u32 nr);
const u64 *refleak__stack(struct refleak *rl, u32 id, u32 *nr);
/* the engine's stacks, and what their frames are */
struct refleak_stacks *refleak__stacks(struct refleak *rl);

int refleak__alloc(struct refleak *rl, const struct refleak_alloc_ev *ev);
int refleak__free(struct refleak *rl, const struct refleak_free_ev *ev);
int refleak__final_put(struct refleak *rl, const struct refleak_put_ev *ev);
int refleak__set(struct refleak *rl, const struct refleak_set_ev *ev);
int refleak__anomaly(struct refleak *rl, const struct refleak_anomaly_ev *ev);
int refleak__ref(struct refleak *rl, const struct refleak_ref_ev *ev);
/*
 * The recording followed every get and put of the caches matching
 * @cache_glob ('record --refs'): their objects' references are named
 * even when one took no get or put, its birth then being the reference.
 */
int refleak__refs_recorded(struct refleak *rl, const char *cache_glob);
/* process pid exited at time (its last thread) */
int refleak__exit(struct refleak *rl, int pid, u64 time);
/* process ppid forked process pid at time */
int refleak__fork(struct refleak *rl, int ppid, int pid, u64 time);
/*
 * nr events were lost somewhere in [start, end].  end == 0 or start > end
 * means "unknown": every verdict becomes uncertain.
 */
void refleak__lost(struct refleak *rl, u64 start, u64 end, u64 nr);

/*
 * The objects of one allocation site and stack that a recording made with
 * 'record -b' saw freed balanced, summed in the kernel: what
 * refleak__free() would have learned from each of them.
 */
struct refleak_site_sum {
	u64		call_site;
	const char	*cache;
	u32		stack;		/* the allocation stack, interned */
	u64		nr_balanced;
	u64		nr_died;	/* every counter at zero */
	u64		died_first_ns;	/* ... the first allocated */
	u64		died_last_ns;	/* ... the last allocated */
	u64		max_life_ns;
	u64		nr_freed_after_zero;
	u64		nr_freed_live_ctr;
	u64		nr_freed_all_zero;
	u64		max_freed_put_ns;
	u64		max_put_free_ns;
	u64		put_offset;	/* where its final puts were */
	u64		nr_puts_at_offset;
};

int refleak__site_sum(struct refleak *rl, const struct refleak_site_sum *sum);

/* End of the recording: classify what is still live. */
int refleak__finish(struct refleak *rl, u64 end_ns);

const struct refleak_stats *refleak__stats(struct refleak *rl);

/*
 * Groups of one class that are reported (for freed_without_final_put and
 * outstanding only objects whose counter was seen born, or of sites proven
 * refcounted).  Returns a malloc'ed array the caller frees, *nr its length.
 */
struct refleak_group **refleak__groups(struct refleak *rl, enum refleak_class class,
				       size_t *nr);

/* Distinct stacks of a group, sorted by count (descending); caller frees. */
struct refleak_stack_count *refleak_group__stacks(struct refleak_group *g,
						  enum refleak_stack_kind kind,
						  size_t *nr);

#endif /* __PERF_REFLEAK_H */
