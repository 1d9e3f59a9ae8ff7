// SPDX-License-Identifier: GPL-2.0
/*
 * Correlation engine for 'perf refleak', see refleak.h.
 *
 * Objects live in an rb-tree keyed by start address, so a final put on the
 * refcount at 'obj' finds the allocation with start <= obj < start + size.
 * A freed object moves to a bounded "graveyard" (rb-tree + FIFO by free
 * time) for a while so that a later final put inside it is seen as a put
 * after free; when it leaves the graveyard it is classified, aggregated into
 * its (class, site) group and released.  Balanced objects are only counted.
 *
 * An object is judged when one of its counters was seen born
 * (ref_trace_set), or when its site (call_site, cache) is "refcounted": some
 * object allocated there, or in the same named slab cache, had a counter
 * born or put to zero in this recording.  The offset of the counter inside
 * the object is learned per site and per cache, and used to match a final
 * put on an object allocated before the recording (no known allocation)
 * with its later free: such verdicts are "inferred".
 *
 * Live objects whose counter never reached zero are likely leaks when
 * their allocation stack left at least min-repeat of them, their site does
 * not mostly free objects with a live counter, and one kind of evidence
 * says nothing will put them (enum refleak_evidence): the process that
 * allocated them exited; or the stack's other objects died young and these
 * kept accumulating; or one of their counters reached zero as the site's
 * other objects' did, and another never did.  The others are only
 * outstanding.  Anomalies (refcount_t's own underflow, get from zero,
 * refcount_dec() to zero and saturation checks) are definite findings, also
 * on counters in no known allocation.
 *
 * With ref_trace_ref (record --refs CACHE), the gets and puts of objects of
 * the traced caches are kept per object, and the references a leaked object
 * was never put are named at the end (refleak-refs.c).
 *
 * Events must arrive in time order (the builtin uses perf's ordered events);
 * events going back in time are counted in nr_out_of_order.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include "hashmap.h"
#include "refleak.h"
#include "refleak-refs.h"
#include "string2.h"

#define REFLEAK_MAX_OFFSETS	16
/* counters followed per object (task_struct has three refcount_t) */
#define REFLEAK_MAX_COUNTERS	4
/* a free this long after the final put came through deferred work */
#define REFLEAK_DEFERRED_FREE_NS	(50ULL * 1000 * 1000)
/*
 * An allocation stack's objects (by stack id - 1): those that reached zero
 * and were freed (their longest life, their first and last birth), and at
 * the end the live ones that outlived them (siblings_died).
 */
struct rl_stack_life {
	u32	path;		/* rl_alloc_path(); 0: not known yet */
	u64	nr_died;
	u64	max_life_ns;
	u64	died_first_ns;
	u64	died_last_ns;
	u64	nr_survivors;
	u64	surv_first_ns;
	u64	surv_last_ns;
};

enum rl_ctr_state {
	RL_CTR_LIVE,		/* born or revived, not at zero */
	RL_CTR_ZERO,		/* final put seen */
	RL_CTR_RETIRED,		/* set to 0: torn down deliberately */
};

struct rl_ctr {
	u32	offset;
	u8	state;
};

struct rl_obj {
	struct rb_node		node;	/* live or graveyard tree */
	struct list_head	fifo;	/* graveyard FIFO */
	struct refleak_site	*site;
	u64			start;
	u64			size;
	u64			alloc_ns;
	u64			put_ns;
	u64			last_put_ns;	/* latest final put on any counter */
	u64			put_ref;	/* refcount address of the first final put */
	u64			put2_ns;
	u64			free_ns;
	u64			late_ns;	/* put after free */
	u32			stack[REFLEAK_NR_STACK_KINDS];
	u32			put2_stack;
	u32			late_stack;
	u32			nr_puts;
	u32			anomaly_stack;
	u64			anomaly_ns;
	int			pid;		/* allocating process, -1 unknown */
	int			tid;		/* ... and thread */
	u8			anomaly;	/* enum refleak_anomaly + 1, 0: none */
	u8			counters;	/* as the group's */
	u8			nr_ctrs;
	struct rl_ctr		ctrs[REFLEAK_MAX_COUNTERS];
	/* the first birth, for a ledger started by a later get or put */
	u32			set_stack;
	u32			set_offset;
	s32			set_count;
	int			set_pid;
	u64			set_ns;
	int			put_pid;	/* of the first final put */
	struct refleak_ledger	*ledger;	/* gets and puts, traced caches only */
	bool			freed;
	bool			put_after_free;
	bool			late_anomaly;	/* ... an anomaly, not a final put */
	bool			inferred;
	bool			uncertain;
	bool			likely;		/* decided by refleak__finish() */
	u8			evidence;	/* ... and why, 1 << enum refleak_evidence */
	bool			filtered;	/* no verdict: outside the filters */
};

struct rl_orphan {
	struct list_head	fifo;
	u64			obj;
	u64			time;
	u64			time2;
	u32			stack;
	u32			stack2;
	u32			count;
};

struct rl_offset {
	u64		offset;
	const char	*cache;
	u64		nr_puts;	/* final puts seen at this offset */
};

struct rl_offsets {
	u32		nr;
	struct rl_offset off[REFLEAK_MAX_OFFSETS];
};

struct rl_lost_window {
	u64	start;
	u64	end;
};

/* an object of a finding whose references are named at the end */
struct rl_pending {
	struct refleak_ledger	*ledger;
	struct refleak_group	*group;
	bool			uncertain;
};

struct refleak {
	struct refleak_config	cfg;
	struct refleak_stats	stats;
	u64			now;
	bool			started;
	bool			finished;
	/* objects */
	struct rb_root		live;
	/*
	 * The live object last allocated or found: the next events of an
	 * object (its counter set, put, free) usually come before any other
	 * object's, and live objects never overlap, so an address inside it
	 * is inside no other.
	 */
	struct rl_obj		*last_live;
	struct list_head	spare_objs;	/* retired, for reuse (rl_obj__new()) */
	u32			nr_spare_objs;
	struct rb_root		grave;
	struct list_head	grave_fifo;
	u32			nr_grave;
	/* final puts on unknown objects, by address, FIFO by time */
	struct hashmap		*orphans;
	struct hashmap		*rcu_pending;	/* kfree_rcu()'d, free not seen yet */
	struct list_head	orphan_fifo;
	u64			nr_orphan_puts;
	u64			nr_orphan_matched;
	/* sites: call_site -> chain of sites (one per cache) */
	struct hashmap		*sites;
	struct refleak_site	**site_array;
	size_t			nr_sites;
	size_t			alloc_sites;
	/* learned refcount offsets: per cache (key: interned name) and global */
	struct hashmap		*cache_offsets;
	struct rl_offsets	all_offsets;
	/* interning */
	struct hashmap		*strs;
	struct refleak_stacks	*stacks;
	struct rl_stack_life		*stack_life;	/* by stack id - 1 */
	u32			nr_stack_life;
	/*
	 * Most events repeat a recent cache name and site: checked by
	 * comparing the string itself, a hit costs no hashing of it.
	 */
	const char		*last_str;
	struct refleak_site	*last_site;
	/* process exits: pid -> time of the last exit */
	struct hashmap		*exits;
	/* process forks: child pid -> parent pid, and -> time of the fork */
	struct hashmap		*fork_parent;
	struct hashmap		*fork_time;
	/* what the rules of refleak-refs.c ask of processes */
	struct refleak_tasks	tasks;
	/*
	 * At the end: pid -> the latest time it forked a process of which
	 * a descendant is still running (or exited less than min-age ago)
	 */
	struct hashmap		*handed_on;
	/* lost windows, in arrival order */
	struct rl_lost_window		*lost;
	size_t			nr_lost;
	size_t			alloc_lost;
	bool			lost_sorted;
	bool			lost_unknown;
	/* caches whose gets and puts were recorded, or not (interned name -> RL_CACHE_*) */
	struct hashmap		*traced_caches;
	/* the caches (globs) the recording says it followed with ref_trace_ref */
	char			**refs_recorded;
	size_t			nr_refs_recorded;
	struct rl_pending	*pending;
	size_t			nr_pending;
	size_t			alloc_pending;
};

/* one row per class: JSON key, what it means, what its age column measures, tier */
static const struct {
	const char *name, *help, *age;
	enum refleak_tier tier;
} class_info[REFLEAK_NR_CLASSES] = {
	[REFLEAK_PUT_AFTER_FREE]	  = { "put_after_free",
		"counter put after its object was freed", "put-free", REFLEAK_TIER_DEFINITE },
	[REFLEAK_DOUBLE_PUT]		  = { "double_put",
		"counter put again after it reached zero", "put2-put1", REFLEAK_TIER_DEFINITE },
	[REFLEAK_UNDERFLOW]		  = { "underflow",
		"put on a counter at zero (refcount_t saturated it)", "age",
		REFLEAK_TIER_DEFINITE },
	[REFLEAK_GET_FROM_ZERO]		  = { "get_from_zero",
		"get on a counter at zero: use after free", "age", REFLEAK_TIER_DEFINITE },
	[REFLEAK_DEC_TO_ZERO]		  = { "dec_to_zero",
		"refcount_dec() reached zero: nothing will release it", "age",
		REFLEAK_TIER_DEFINITE },
	[REFLEAK_SATURATED]		  = { "saturated",
		"counter overflowed and saturated: it will never be freed", "age",
		REFLEAK_TIER_DEFINITE },
	[REFLEAK_FINAL_PUT_NOT_FREED]	  = { "final_put_not_freed",
		"counter reached zero, object never freed", "since put", REFLEAK_TIER_DEFINITE },
	[REFLEAK_LIKELY_LEAK]		  = { "likely_leak",
		"counter never reached zero, and nothing left will put it", "age",
		REFLEAK_TIER_LIKELY },
	[REFLEAK_FREED_WITHOUT_FINAL_PUT] = { "freed_without_final_put",
		"freed before its counter reached zero (legal or not)",
		"lifetime", REFLEAK_TIER_POSSIBLE },
	[REFLEAK_PUT_NOT_FREED_YET]	  = { "put_not_freed_yet",
		"counter reached zero, not freed yet: its site frees late, or lost events",
		"since put", REFLEAK_TIER_POSSIBLE },
	[REFLEAK_OUTSTANDING]		  = { "outstanding",
		"live at the end, counter never reached zero: in use, or leaked", "age",
		REFLEAK_TIER_POSSIBLE },
	[REFLEAK_BALANCED]		  = { "balanced", "final put then free", "free-put",
		REFLEAK_TIER_NONE },
};

static const char * const tier_names[REFLEAK_NR_TIERS] = {
	[REFLEAK_TIER_DEFINITE]	= "definite",
	[REFLEAK_TIER_LIKELY]	= "likely",
	[REFLEAK_TIER_POSSIBLE]	= "possible",
	[REFLEAK_TIER_NONE]	= "none",
};

/* JSON keys of the evidence of a likely leak, see refleak.h */
static const char * const evidence_names[REFLEAK_NR_EVIDENCE] = {
	[REFLEAK_EVIDENCE_OWNER_EXITED]	 = "owner_exited",
	[REFLEAK_EVIDENCE_SIBLINGS_DIED] = "siblings_died",
	[REFLEAK_EVIDENCE_COUNTER_LEFT]	 = "counter_left",
	[REFLEAK_EVIDENCE_PAST_LAST_PUT] = "past_last_put",
	[REFLEAK_EVIDENCE_CALL_REF_HELD] = "call_ref_held",
};

static const char * const stack_kind_names[REFLEAK_NR_STACK_KINDS] = {
	[REFLEAK_STACK_ALLOC]	= "alloc",
	[REFLEAK_STACK_PUT]	= "put",
	[REFLEAK_STACK_FREE]	= "free",
};

const char *refleak_class__name(enum refleak_class class)
{
	return class < REFLEAK_NR_CLASSES ? class_info[class].name : "unknown";
}

const char *refleak_class__help(enum refleak_class class)
{
	return class < REFLEAK_NR_CLASSES ? class_info[class].help : "";
}

const char *refleak_class__age(enum refleak_class class)
{
	return class < REFLEAK_NR_CLASSES ? class_info[class].age : "";
}

const char *refleak_stack_kind__name(enum refleak_stack_kind kind)
{
	return kind < REFLEAK_NR_STACK_KINDS ? stack_kind_names[kind] : "unknown";
}

enum refleak_tier refleak_class__tier(enum refleak_class class)
{
	return class < REFLEAK_NR_CLASSES ? class_info[class].tier : REFLEAK_TIER_NONE;
}

const char *refleak_tier__name(enum refleak_tier tier)
{
	return tier < REFLEAK_NR_TIERS ? tier_names[tier] : "unknown";
}

static const char * const counter_names[REFLEAK_NR_COUNTERS] = {
	[REFLEAK_COUNTER_UNKNOWN]	= "unknown",
	[REFLEAK_COUNTER_REFCOUNT]	= "refcount_t",
	[REFLEAK_COUNTER_PERCPU_REF]	= "percpu_ref",
	[REFLEAK_COUNTER_FILE_REF]	= "file_ref_t",
	[REFLEAK_COUNTER_RCUREF]	= "rcuref_t",
};

const char *refleak_counter__name(enum refleak_counter counter)
{
	return counter < REFLEAK_NR_COUNTERS ? counter_names[counter] : counter_names[0];
}

/* a counter type's bit in the counters masks; none for an unknown type */
static u8 rl_counter_bit(enum refleak_counter counter)
{
	return counter > REFLEAK_COUNTER_UNKNOWN && counter < REFLEAK_NR_COUNTERS ?
	       1 << counter : 0;
}

/* ref_trace's kind values print as the type without its "_t" */
enum refleak_counter refleak_counter__of_kind(const char *kind)
{
	size_t len = kind ? strlen(kind) : 0;
	int c;

	for (c = REFLEAK_COUNTER_UNKNOWN + 1; len && c < REFLEAK_NR_COUNTERS; c++)
		if (!strncmp(counter_names[c], kind, len) &&
		    (!counter_names[c][len] || !strcmp(counter_names[c] + len, "_t")))
			return c;
	return REFLEAK_COUNTER_UNKNOWN;
}

const char *refleak_evidence__name(enum refleak_evidence ev)
{
	return ev < REFLEAK_NR_EVIDENCE ? evidence_names[ev] : "unknown";
}

void refleak_config__init(struct refleak_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->min_age_ns = REFLEAK_DEFAULT_MIN_AGE_NS;
	cfg->graveyard_ns = REFLEAK_DEFAULT_GRAVEYARD_NS;
	cfg->graveyard_max = REFLEAK_DEFAULT_GRAVEYARD_MAX;
	cfg->max_objects_per_group = REFLEAK_DEFAULT_MAX_OBJECTS;
	cfg->min_repeat = REFLEAK_DEFAULT_MIN_REPEAT;
	cfg->sibling_factor = REFLEAK_DEFAULT_SIBLING_FACTOR;
}

/* hashmap helpers */

static size_t u64_hash(long key, void *ctx __maybe_unused)
{
	return (size_t)((u64)key * 0x9E3779B97F4A7C15ULL >> 16);
}

static bool u64_equal(long a, long b, void *ctx __maybe_unused)
{
	return a == b;
}

static size_t strkey_hash(long key, void *ctx __maybe_unused)
{
	return str_hash((const char *)key);
}

static bool strkey_equal(long a, long b, void *ctx __maybe_unused)
{
	return !strcmp((const char *)a, (const char *)b);
}

/* did process @pid exit after @after and by @by? */
static bool rl_exited(void *arg, int pid, u64 after, u64 by)
{
	struct refleak *rl = arg;
	long exit_ns;

	return pid > 0 && hashmap__find(rl->exits, pid, &exit_ns) &&
	       (u64)exit_ns >= after && (u64)exit_ns <= by;
}

/* the parent of every kernel thread: kthreadd */
#define REFLEAK_KTHREADD_PID	2

static bool rl_running(struct refleak *rl, int pid, u64 forked, u64 end_ns);

/*
 * Is @pid, which took a reference at @time, a user process running at the
 * end?  Only a process forked in the recording is known to be one: a
 * kernel worker is no holder that goes away (kthreadd forks them all).
 */
static bool rl_user_running(void *arg, int pid, u64 time)
{
	struct refleak *rl = arg;
	long forked, parent;

	if (pid <= 0 || !hashmap__find(rl->fork_time, pid, &forked) || (u64)forked > time ||
	    !hashmap__find(rl->fork_parent, pid, &parent) || parent == REFLEAK_KTHREADD_PID)
		return false;
	return rl_running(rl, pid, forked, rl->now);
}

struct refleak *refleak__new(const struct refleak_config *cfg)
{
	struct refleak *rl = zalloc(sizeof(*rl));

	if (!rl)
		return NULL;
	if (cfg)
		rl->cfg = *cfg;
	else
		refleak_config__init(&rl->cfg);
	rl->live = RB_ROOT;
	rl->grave = RB_ROOT;
	INIT_LIST_HEAD(&rl->grave_fifo);
	INIT_LIST_HEAD(&rl->orphan_fifo);
	INIT_LIST_HEAD(&rl->spare_objs);
	rl->lost_sorted = true;
	rl->tasks = (struct refleak_tasks){
		.exited = rl_exited, .running = rl_user_running, .arg = rl,
	};
	rl->orphans = hashmap__new(u64_hash, u64_equal, NULL);
	rl->sites = hashmap__new(u64_hash, u64_equal, NULL);
	rl->cache_offsets = hashmap__new(u64_hash, u64_equal, NULL);
	rl->strs = hashmap__new(strkey_hash, strkey_equal, NULL);
	rl->stacks = refleak_stacks__new(rl->cfg.symbol, rl->cfg.symbol_ctx);
	rl->exits = hashmap__new(u64_hash, u64_equal, NULL);
	rl->fork_parent = hashmap__new(u64_hash, u64_equal, NULL);
	rl->fork_time = hashmap__new(u64_hash, u64_equal, NULL);
	rl->handed_on = hashmap__new(u64_hash, u64_equal, NULL);
	rl->rcu_pending = hashmap__new(u64_hash, u64_equal, NULL);
	rl->traced_caches = hashmap__new(u64_hash, u64_equal, NULL);
	if (IS_ERR(rl->orphans) || IS_ERR(rl->sites) || IS_ERR(rl->cache_offsets) ||
	    IS_ERR(rl->strs) || !rl->stacks || IS_ERR(rl->exits) ||
	    IS_ERR(rl->fork_parent) || IS_ERR(rl->fork_time) || IS_ERR(rl->handed_on) ||
	    IS_ERR(rl->rcu_pending) || IS_ERR(rl->traced_caches)) {
		if (IS_ERR(rl->orphans))
			rl->orphans = NULL;
		if (IS_ERR(rl->sites))
			rl->sites = NULL;
		if (IS_ERR(rl->cache_offsets))
			rl->cache_offsets = NULL;
		if (IS_ERR(rl->strs))
			rl->strs = NULL;
		if (IS_ERR(rl->exits))
			rl->exits = NULL;
		if (IS_ERR(rl->fork_parent))
			rl->fork_parent = NULL;
		if (IS_ERR(rl->fork_time))
			rl->fork_time = NULL;
		if (IS_ERR(rl->handed_on))
			rl->handed_on = NULL;
		if (IS_ERR(rl->rcu_pending))
			rl->rcu_pending = NULL;
		if (IS_ERR(rl->traced_caches))
			rl->traced_caches = NULL;
		refleak__delete(rl);
		return NULL;
	}
	return rl;
}

/*
 * Objects retired kept for the next allocations: each object the recording
 * allocates and frees would otherwise cost a malloc() and a free() of its
 * own, about 4 % of the report's instructions.
 */
#define RL_SPARE_OBJS	1024

static struct rl_obj *rl_obj__new(struct refleak *rl)
{
	struct rl_obj *o;

	if (list_empty(&rl->spare_objs))
		return zalloc(sizeof(*o));
	o = list_first_entry(&rl->spare_objs, struct rl_obj, fifo);
	list_del(&o->fifo);
	rl->nr_spare_objs--;
	memset(o, 0, sizeof(*o));
	return o;
}

/* @rl NULL: the engine is going, nothing is kept */
static void rl_obj__free(struct refleak *rl, struct rl_obj *o)
{
	refleak_ledger__delete(o->ledger);
	if (rl && rl->nr_spare_objs < RL_SPARE_OBJS) {
		list_add(&o->fifo, &rl->spare_objs);
		rl->nr_spare_objs++;
		return;
	}
	free(o);
}

static void rl_free_tree(struct rb_root *root)
{
	struct rb_node *nd = rb_first(root);

	while (nd) {
		struct rl_obj *o = rb_entry(nd, struct rl_obj, node);

		nd = rb_next(nd);
		rb_erase(&o->node, root);
		rl_obj__free(NULL, o);
	}
}

static void rl_group__delete(struct refleak_group *g)
{
	int k;

	if (!g)
		return;
	for (k = 0; k < REFLEAK_NR_STACK_KINDS; k++)
		hashmap__free(g->stacks[k]);
	refleak_refs__group_exit(g);
	free(g->objects);
	free(g);
}

void refleak__delete(struct refleak *rl)
{
	struct hashmap_entry *cur;
	size_t bkt, i;

	if (!rl)
		return;
	rl_free_tree(&rl->live);
	rl_free_tree(&rl->grave);
	while (!list_empty(&rl->spare_objs)) {
		struct rl_obj *o = list_first_entry(&rl->spare_objs, struct rl_obj, fifo);

		list_del(&o->fifo);
		free(o);
	}
	if (rl->orphans) {
		hashmap__for_each_entry(rl->orphans, cur, bkt)
			free((void *)cur->value);
		hashmap__free(rl->orphans);
	}
	for (i = 0; i < rl->nr_sites; i++) {
		struct refleak_site *site = rl->site_array[i];
		int c;

		for (c = 0; c < REFLEAK_NR_CLASSES; c++)
			rl_group__delete(site->groups[c]);
		refleak_refs__site_exit(site);
		free(site);
	}
	free(rl->site_array);
	hashmap__free(rl->sites);
	if (rl->cache_offsets) {
		hashmap__for_each_entry(rl->cache_offsets, cur, bkt)
			free((void *)cur->value);
		hashmap__free(rl->cache_offsets);
	}
	if (rl->strs) {
		hashmap__for_each_entry(rl->strs, cur, bkt)
			free((void *)cur->key);
		hashmap__free(rl->strs);
	}
	refleak_stacks__delete(rl->stacks);
	free(rl->stack_life);
	hashmap__free(rl->exits);
	hashmap__free(rl->fork_parent);
	hashmap__free(rl->fork_time);
	hashmap__free(rl->handed_on);
	hashmap__free(rl->rcu_pending);
	hashmap__free(rl->traced_caches);
	for (i = 0; i < rl->nr_refs_recorded; i++)
		free(rl->refs_recorded[i]);
	free(rl->refs_recorded);
	for (i = 0; i < rl->nr_pending; i++)
		refleak_ledger__delete(rl->pending[i].ledger);
	free(rl->pending);
	free(rl->lost);
	free(rl);
}

/* a string (a cache's name) kept once, for the engine's life */
static const char *rl_intern_str(struct refleak *rl, const char *s)
{
	char *dup;

	if (!s)
		return NULL;
	if (rl->last_str && !strcmp(rl->last_str, s))
		return rl->last_str;
	if (hashmap__find(rl->strs, s, &dup))
		return rl->last_str = dup;
	dup = strdup(s);
	if (!dup)
		return NULL;
	if (hashmap__add(rl->strs, dup, dup)) {
		free(dup);
		return NULL;
	}
	return rl->last_str = dup;
}

u32 refleak__intern_stack(struct refleak *rl, const u64 *ips, u32 nr)
{
	u32 id = refleak_stacks__intern(rl->stacks, ips, nr);

	if (id > rl->nr_stack_life) {
		u32 n = max(id, 2 * rl->nr_stack_life);
		struct rl_stack_life *more = realloc(rl->stack_life, n * sizeof(*more));

		if (!more)
			return 0;
		memset(more + rl->nr_stack_life, 0, (n - rl->nr_stack_life) * sizeof(*more));
		rl->stack_life = more;
		rl->nr_stack_life = n;
	}
	rl->stats.nr_stacks = refleak_stacks__nr(rl->stacks);
	return id;
}

const u64 *refleak__stack(struct refleak *rl, u32 id, u32 *nr)
{
	return refleak_stacks__get(rl->stacks, id, nr);
}

struct refleak_stacks *refleak__stacks(struct refleak *rl)
{
	return rl->stacks;
}

/* an allocation stack's objects, NULL for no stack */
static struct rl_stack_life *rl_stack_life(struct refleak *rl, u32 id)
{
	return id && id <= rl->nr_stack_life ? &rl->stack_life[id - 1] : NULL;
}

/*
 * The allocation path of stack @id, as its objects' lives are counted: the
 * stack down to an interrupt's entry if it was taken in one, else the
 * stack.  An object allocated in a softirq (a packet received, a timer)
 * is allocated on the same path whatever task the softirq interrupted;
 * that part of the stack differs from one allocation to the next.
 */
static u32 rl_alloc_path(struct refleak *rl, u32 id)
{
	struct rl_stack_life *st = rl_stack_life(rl, id);
	const u64 *ips;
	u64 *copy;
	u32 nr = 0, end, path = id;

	if (!st)
		return id;
	if (st->path)
		return st->path;
	ips = refleak_stacks__get(rl->stacks, id, &nr);
	end = ips ? refleak_stacks__irq_end(rl->stacks, ips, nr) : nr;
	if (end < nr) {
		/* interning may move the stacks @ips points into */
		copy = memdup(ips, end * sizeof(*ips));
		if (copy)
			path = refleak__intern_stack(rl, copy, end) ?: id;
		free(copy);
	}
	/* and the lives of the stacks */
	st = rl_stack_life(rl, id);
	st->path = path;
	return path;
}

/* sites */

static struct refleak_site *rl_site(struct refleak *rl, u64 call_site, const char *cache)
{
	struct refleak_site *head = NULL, *site = rl->last_site;

	if (site && site->call_site == call_site && site->cache == cache)
		return site;
	if (hashmap__find(rl->sites, call_site, &head)) {
		for (site = head; site; site = site->next)
			if (site->cache == cache)
				return rl->last_site = site;
	}
	site = zalloc(sizeof(*site));
	if (!site)
		return NULL;
	if (rl->nr_sites == rl->alloc_sites) {
		size_t n = rl->alloc_sites ? rl->alloc_sites * 2 : 64;
		struct refleak_site **arr = realloc(rl->site_array, n * sizeof(*arr));

		if (!arr) {
			free(site);
			return NULL;
		}
		rl->site_array = arr;
		rl->alloc_sites = n;
	}
	site->call_site = call_site;
	site->cache = cache;
	site->next = head;
	if (hashmap__set(rl->sites, call_site, site, NULL, NULL)) {
		free(site);
		return NULL;
	}
	rl->site_array[rl->nr_sites++] = site;
	return rl->last_site = site;
}

static void rl_offsets_add(struct rl_offsets *offs, u64 offset, const char *cache)
{
	u32 i;

	for (i = 0; i < offs->nr; i++) {
		if (offs->off[i].offset == offset && offs->off[i].cache == cache) {
			offs->off[i].nr_puts++;
			return;
		}
	}
	if (offs->nr < REFLEAK_MAX_OFFSETS) {
		offs->off[offs->nr].offset = offset;
		offs->off[offs->nr].cache = cache;
		offs->off[offs->nr].nr_puts = 1;
		offs->nr++;
	}
}

static struct rl_offsets *rl_cache_offsets(struct refleak *rl, const char *cache, bool create)
{
	struct rl_offsets *offs = NULL;

	if (hashmap__find(rl->cache_offsets, cache, &offs) || !create)
		return offs;
	offs = zalloc(sizeof(*offs));
	if (offs && hashmap__add(rl->cache_offsets, cache, offs))
		zfree(&offs);
	return offs;
}

static void rl_site_learn(struct refleak *rl, struct refleak_site *site, u64 offset)
{
	struct rl_offsets *offs;

	site->refcounted = true;
	if (!site->offset_known) {
		site->offset_known = true;
		site->ref_offset = offset;
	} else if (site->ref_offset != offset) {
		site->offset_mixed = true;
	}
	/* every birth and final put comes here: the cache's offsets looked up once */
	if (!site->cache_offsets)
		site->cache_offsets = rl_cache_offsets(rl, site->cache, true);
	offs = site->cache_offsets;
	if (offs)
		rl_offsets_add(offs, offset, site->cache);
	rl_offsets_add(&rl->all_offsets, offset, site->cache);
}

/*
 * A named slab cache holds objects of one type, so a final put seen at
 * offset K in any of its objects makes the cache's objects refcounted at K,
 * whichever function allocated them: a site whose every object leaks (a
 * leaked reference, a premature free) never shows a final put of its own.
 * kmalloc caches mix types and prove nothing about other sites, and nor does
 * a named cache the kernel merged into one of them (boot with slab_nomerge
 * to keep cache names precise). A type with
 * several refcounts (a refcount_t and a percpu_ref, say) shows several
 * offsets: the site is refcounted all the same, and the offset reported is
 * the one seen most often, marked mixed.
 */
static bool rl_cache__refcounted(struct refleak *rl, const char *cache)
{
	struct rl_offsets *offs;

	/* kmalloc-96, dma-kmalloc-64, ...: also a cache that merged into them */
	if (!cache || strstr(cache, REFLEAK_KMALLOC))
		return false;
	offs = rl_cache_offsets(rl, cache, false);
	return offs && offs->nr;
}

/*
 * Settles the site's counter offset from its cache's: only once every event
 * is in (refleak__finish()), so that the offset reported does not depend on
 * when it was first asked, and so on the output options.
 */
static bool rl_site__refcounted(struct refleak *rl, struct refleak_site *site)
{
	struct rl_offsets *offs;
	u64 best = 0;
	u32 i;

	if (site->refcounted)
		return true;
	/* kmalloc-96, dma-kmalloc-64, ...: also a cache that merged into them */
	if (!site->cache || strstr(site->cache, REFLEAK_KMALLOC))
		return false;
	offs = rl_cache_offsets(rl, site->cache, false);
	if (!offs || !offs->nr)
		return false;
	site->refcounted = true;
	site->by_cache = true;
	site->offset_known = true;
	site->offset_mixed = offs->nr > 1;
	for (i = 0; i < offs->nr; i++) {
		if (offs->off[i].nr_puts > best) {
			best = offs->off[i].nr_puts;
			site->ref_offset = offs->off[i].offset;
		}
	}
	return true;
}

/* groups */

static struct refleak_group *rl_group(struct refleak_site *site, enum refleak_class class)
{
	struct refleak_group *g = site->groups[class];

	if (g)
		return g;
	g = zalloc(sizeof(*g));
	if (!g)
		return NULL;
	g->site = site;
	g->class = class;
	site->groups[class] = g;
	return g;
}

static void rl_group__add_stack(struct refleak_group *g, enum refleak_stack_kind kind, u32 id)
{
	long count = 0;

	if (!id)
		return;
	if (!g->stacks[kind]) {
		g->stacks[kind] = hashmap__new(u64_hash, u64_equal, NULL);
		if (IS_ERR(g->stacks[kind])) {
			g->stacks[kind] = NULL;
			return;
		}
	}
	hashmap__find(g->stacks[kind], id, &count);
	hashmap__set(g->stacks[kind], id, count + 1, NULL, NULL);
}

static void rl_group__add_object(struct refleak *rl, struct refleak_group *g,
				 const struct rl_obj *o, u64 age)
{
	struct refleak_object *ro;
	u32 max = rl->cfg.max_objects_per_group;

	/*
	 * Most sites are never seen refcounted (plain kmalloc users) and their
	 * groups are not reported: keep only a few of their objects, in case
	 * the site turns out refcounted later in the recording.
	 */
	if (!g->site->refcounted && !rl_cache__refcounted(rl, g->site->cache) && max > 16)
		max = 16;
	if (g->nr_objects >= max) {
		g->objects_dropped++;
		return;
	}
	if (g->nr_objects == g->alloc_objects) {
		u32 n = g->alloc_objects ? g->alloc_objects * 2 : 8;
		struct refleak_object *arr;

		if (n > rl->cfg.max_objects_per_group)
			n = rl->cfg.max_objects_per_group;
		if (n < g->nr_objects + 1)
			n = g->nr_objects + 1;
		arr = realloc(g->objects, n * sizeof(*arr));
		if (!arr) {
			g->objects_dropped++;
			return;
		}
		g->objects = arr;
		g->alloc_objects = n;
	}
	ro = &g->objects[g->nr_objects++];
	ro->addr = o->start;
	ro->size = o->size;
	ro->alloc_ns = o->alloc_ns;
	ro->put_ns = o->put_ns;
	ro->put2_ns = o->put_after_free ? o->late_ns : o->put2_ns;
	ro->free_ns = o->freed ? o->free_ns : 0;
	ro->age_ns = age;
	ro->inferred = o->inferred;
	ro->uncertain = o->uncertain;
	ro->evidence = o->evidence;
	ro->pid = o->inferred ? -1 : o->pid;
	ro->tid = o->inferred ? -1 : o->tid;
}

/* lost windows */

static bool rl_lost_overlap(struct refleak *rl, u64 from, u64 to)
{
	size_t i;

	if (rl->lost_unknown)
		return true;
	for (i = rl->nr_lost; i > 0; i--) {
		const struct rl_lost_window *w = &rl->lost[i - 1];

		if (rl->lost_sorted && w->end < from)
			break;
		if (w->start <= to && w->end >= from)
			return true;
	}
	return false;
}

void refleak__lost(struct refleak *rl, u64 start, u64 end, u64 nr)
{
	rl->stats.nr_lost += nr;
	rl->stats.nr_lost_windows++;
	if (!end || start > end) {
		rl->lost_unknown = true;
		return;
	}
	if (rl->nr_lost == rl->alloc_lost) {
		size_t n = rl->alloc_lost ? rl->alloc_lost * 2 : 16;
		struct rl_lost_window *arr = realloc(rl->lost, n * sizeof(*arr));

		if (!arr) {
			rl->lost_unknown = true;
			return;
		}
		rl->lost = arr;
		rl->alloc_lost = n;
	}
	if (rl->nr_lost && rl->lost[rl->nr_lost - 1].end > end)
		rl->lost_sorted = false;
	rl->lost[rl->nr_lost].start = start;
	rl->lost[rl->nr_lost].end = end;
	rl->nr_lost++;
}

/* classification of an object leaving the engine */

static struct rl_ctr *rl_ctr(struct rl_obj *o, u64 offset, bool create)
{
	u8 i;

	for (i = 0; i < o->nr_ctrs; i++)
		if (o->ctrs[i].offset == offset)
			return &o->ctrs[i];
	if (!create || o->nr_ctrs == REFLEAK_MAX_COUNTERS)
		return NULL;
	o->ctrs[o->nr_ctrs].offset = offset;
	o->ctrs[o->nr_ctrs].state = RL_CTR_LIVE;
	return &o->ctrs[o->nr_ctrs++];
}

/* a counter of the object was born and holds references now */
static bool rl_obj__live_ctr(const struct rl_obj *o)
{
	u8 i;

	for (i = 0; i < o->nr_ctrs; i++)
		if (o->ctrs[i].state == RL_CTR_LIVE)
			return true;
	return false;
}

/* every counter seen was retired on purpose (percpu_ref_exit() of a live ref) */
static bool rl_obj__retired(const struct rl_obj *o)
{
	u8 i;

	for (i = 0; i < o->nr_ctrs; i++)
		if (o->ctrs[i].state != RL_CTR_RETIRED)
			return false;
	return o->nr_ctrs > 0;
}

static enum refleak_class rl_anomaly_class(const struct rl_obj *o)
{
	switch (o->anomaly - 1) {
	case REFLEAK_ANOMALY_SUB_UAF:
		return o->nr_puts ? REFLEAK_DOUBLE_PUT : REFLEAK_UNDERFLOW;
	case REFLEAK_ANOMALY_ADD_UAF:
		return REFLEAK_GET_FROM_ZERO;
	case REFLEAK_ANOMALY_DEC_LEAK:
		return REFLEAK_DEC_TO_ZERO;
	default:
		return REFLEAK_SATURATED;
	}
}

enum { RL_CACHE_TRACED = 1, RL_CACHE_UNTRACED };

int refleak__refs_recorded(struct refleak *rl, const char *cache_glob)
{
	char **grown = realloc(rl->refs_recorded,
			       (rl->nr_refs_recorded + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	rl->refs_recorded = grown;
	grown[rl->nr_refs_recorded] = strdup(cache_glob);
	if (!grown[rl->nr_refs_recorded])
		return -ENOMEM;
	rl->nr_refs_recorded++;
	return 0;
}

/*
 * Were the gets and puts of @cache's counters recorded?  Yes if one of its
 * ref_trace_ref events was seen, or if the recording names the cache
 * among those it followed: a counter that took no get and no put between
 * its birth and the end has no event of its own to say so.  The answer
 * from the names is looked up once per cache.
 */
static bool rl_cache_traced(struct refleak *rl, const char *cache)
{
	long v;
	size_t i;

	/* a recording of no gets and puts: no lookup on every birth */
	if (!cache || (!rl->nr_refs_recorded && !hashmap__size(rl->traced_caches)))
		return false;
	if (hashmap__find(rl->traced_caches, (long)cache, &v))
		return v == RL_CACHE_TRACED;
	if (!rl->nr_refs_recorded)
		return false;
	v = RL_CACHE_UNTRACED;
	for (i = 0; i < rl->nr_refs_recorded; i++)
		if (strglobmatch(cache, rl->refs_recorded[i]))
			v = RL_CACHE_TRACED;
	/* a failed add only costs the same lookup again */
	hashmap__add(rl->traced_caches, (long)cache, v);
	return v == RL_CACHE_TRACED;
}

/*
 * Objects of a cache whose gets and puts were recorded: a balanced one
 * teaches its site which get each put pairs with; the references of one of
 * a finding are named at the end, when every balanced object has taught.
 */
static void rl_refs_retire(struct refleak *rl, struct rl_obj *o, struct refleak_group *g)
{
	struct rl_pending *p;

	if (!o->ledger && o->set_count > 0 && rl_cache_traced(rl, o->site->cache)) {
		/* no get or put on this object: its birth and final put */
		if (refleak_ledger__birth(&o->ledger, o->set_offset, o->set_stack,
					  o->set_count, o->set_ns, o->set_pid) < 0)
			return;
		if (o->nr_puts && o->put_ref == o->start + o->set_offset)
			refleak_ledger__final(o->ledger, o->set_offset,
					      o->stack[REFLEAK_STACK_PUT], o->put_ns, o->put_pid);
	}
	if (!o->ledger) {
		/* no gets and puts: its birth and final put say who held it */
		if (g->class == REFLEAK_BALANCED && o->set_count > 0 && o->nr_puts &&
		    o->put_ref == o->start + o->set_offset)
			refleak_refs__learn_birth(rl->stacks, o->site, o->set_stack, o->set_pid,
						  o->set_ns, o->stack[REFLEAK_STACK_PUT],
						  o->put_pid, o->put_ns, &rl->tasks);
		return;
	}
	if (g->class == REFLEAK_BALANCED) {
		const struct refleak_ledger *l;

		/* every counter reached zero: each teaches its pairs; together, their order */
		for (l = o->ledger; l; l = refleak_ledger__next(l))
			refleak_refs__learn(rl->stacks, o->site, l, &rl->tasks);
		refleak_refs__learn_order(o->site, o->ledger);
		return;
	}
	if (g->class != REFLEAK_LIKELY_LEAK && g->class != REFLEAK_OUTSTANDING &&
	    g->class != REFLEAK_FREED_WITHOUT_FINAL_PUT)
		return;
	if (rl->nr_pending == rl->alloc_pending) {
		size_t n = rl->alloc_pending ? rl->alloc_pending * 2 : 64;

		p = realloc(rl->pending, n * sizeof(*p));
		if (!p)
			return;
		rl->pending = p;
		rl->alloc_pending = n;
	}
	p = &rl->pending[rl->nr_pending++];
	p->ledger = o->ledger;
	p->group = g;
	p->uncertain = o->uncertain;
	o->ledger = NULL;
}

/*
 * The class of an object the recording is done with, how long what it
 * rests on lasted (@age) and until when the object was seen (@to).  False:
 * not judged, its last counter put too recently for its free to have come.
 */
static bool rl_classify(struct refleak *rl, struct rl_obj *o, u64 end_ns,
			enum refleak_class *class, u64 *age, u64 *to)
{
	/*
	 * A final put after the free, or a second one, with events lost
	 * between them: the address allocated again, or the counter born
	 * again, in what was lost looks the same.  Those verdicts would rest
	 * on events not seen: not made.  The later put is one on an object
	 * whose allocation was not seen.  (An anomaly is the kernel's own
	 * verdict: it stands.)
	 */
	if (o->put_after_free && !o->late_anomaly &&
	    rl_lost_overlap(rl, o->free_ns, o->late_ns)) {
		o->put_after_free = false;
		o->uncertain = true;
		rl->nr_orphan_puts++;
	}
	if (o->nr_puts >= 2 && !o->anomaly && rl_lost_overlap(rl, o->put_ns, o->put2_ns)) {
		o->nr_puts = 1;
		o->uncertain = true;
		rl->nr_orphan_puts++;
	}
	*age = 0;
	if (o->put_after_free) {
		*class = REFLEAK_PUT_AFTER_FREE;
		*age = o->late_ns - o->free_ns;
		*to = o->late_ns;
	} else if (o->anomaly) {
		*class = rl_anomaly_class(o);
		if (*class == REFLEAK_DOUBLE_PUT) {
			*age = o->anomaly_ns - o->put_ns;
			o->put2_ns = o->anomaly_ns;
			o->put2_stack = o->anomaly_stack;
		} else {
			*age = o->alloc_ns ? o->anomaly_ns - o->alloc_ns : 0;
		}
		*to = o->freed ? o->free_ns : end_ns;
	} else if (o->nr_puts >= 2) {
		*class = REFLEAK_DOUBLE_PUT;
		*age = o->put2_ns - o->put_ns;
		*to = o->freed ? o->free_ns : end_ns;
	} else if (o->freed) {
		*to = o->free_ns;
		if (o->nr_puts || rl_obj__retired(o)) {
			*class = REFLEAK_BALANCED;
			*age = o->nr_puts ? o->free_ns - o->put_ns : 0;
		} else {
			*class = REFLEAK_FREED_WITHOUT_FINAL_PUT;
			*age = o->alloc_ns ? o->free_ns - o->alloc_ns : 0;
		}
	} else {
		*to = end_ns;
		if (o->nr_puts && !rl_obj__live_ctr(o)) {
			/* releasable since its last counter reached zero */
			*age = end_ns > o->last_put_ns ? end_ns - o->last_put_ns : 0;
			/* e.g. waiting for kfree_rcu() when the recording stopped */
			if (*age < rl->cfg.min_age_ns)
				return false;
			/*
			 * A site whose frees come through deferred work (RCU,
			 * a workqueue: a net namespace whose last passive
			 * reference is dropped waits for the next cleanup_net()
			 * run) and that freed no object put after this one may
			 * just not have got to it -- what it freed since may
			 * be an earlier batch -- and a free lost since the put
			 * would look the same: "not yet".
			 */
			if ((o->site->max_put_free_ns >= REFLEAK_DEFERRED_FREE_NS &&
			     o->site->max_freed_put_ns < o->last_put_ns) ||
			    rl_lost_overlap(rl, o->last_put_ns, end_ns))
				*class = REFLEAK_PUT_NOT_FREED_YET;
			else
				*class = REFLEAK_FINAL_PUT_NOT_FREED;
		} else {
			/* another counter of it still holds references: in use */
			*class = o->likely ? REFLEAK_LIKELY_LEAK : REFLEAK_OUTSTANDING;
			*age = end_ns > o->alloc_ns ? end_ns - o->alloc_ns : 0;
		}
	}
	return true;
}

/* an object of @g's class counted in it, with its stacks and, if kept, itself */
static void rl_group__count(struct refleak *rl, struct refleak_group *g, struct rl_obj *o,
			    u64 age)
{
	enum refleak_class class = g->class;
	int ev;

	rl_refs_retire(rl, o, g);
	g->count++;
	g->bytes += o->size;
	if (age > g->max_age_ns)
		g->max_age_ns = age;
	if (o->inferred)
		g->nr_inferred++;
	if (o->uncertain)
		g->nr_uncertain++;
	if (o->nr_ctrs)
		g->nr_born++;
	for (ev = 0; ev < REFLEAK_NR_EVIDENCE; ev++)
		if (o->evidence & (1 << ev))
			g->nr_evidence[ev]++;
	/* balanced groups are counted, never listed: their stacks are never shown */
	if (class == REFLEAK_BALANCED)
		return;
	rl_group__add_stack(g, REFLEAK_STACK_ALLOC, o->stack[REFLEAK_STACK_ALLOC]);
	rl_group__add_stack(g, REFLEAK_STACK_PUT, o->stack[REFLEAK_STACK_PUT]);
	if (class == REFLEAK_DOUBLE_PUT)
		rl_group__add_stack(g, REFLEAK_STACK_PUT, o->put2_stack);
	else if (o->anomaly && class != REFLEAK_PUT_AFTER_FREE)
		rl_group__add_stack(g, REFLEAK_STACK_PUT, o->anomaly_stack);
	g->counters |= o->counters;
	if (class == REFLEAK_PUT_AFTER_FREE)
		rl_group__add_stack(g, REFLEAK_STACK_PUT, o->late_stack);
	rl_group__add_stack(g, REFLEAK_STACK_FREE, o->stack[REFLEAK_STACK_FREE]);
	if (rl->cfg.keep_objects)
		rl_group__add_object(rl, g, o, age);
}

/* an object the recording is done with: judged, counted in its group, freed */
static void rl_retire(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	enum refleak_class class;
	struct refleak_group *g;
	u64 age, from, to;

	if (o->filtered) {
		rl->stats.nr_filtered++;
		rl_obj__free(rl, o);
		return;
	}
	if (!rl_classify(rl, o, end_ns, &class, &age, &to)) {
		rl->stats.nr_pending_free++;
		rl_obj__free(rl, o);
		return;
	}
	from = o->alloc_ns ? o->alloc_ns : rl->stats.first_ns;
	if (to < from)
		to = from;
	if (rl_lost_overlap(rl, from, to))
		o->uncertain = true;

	g = rl_group(o->site, class);
	if (g)
		rl_group__count(rl, g, o, age);
	rl_obj__free(rl, o);
}

/* trees */

static struct rl_obj *rl_floor(struct rb_root *root, u64 addr)
{
	struct rb_node *nd = root->rb_node;
	struct rl_obj *best = NULL;

	while (nd) {
		struct rl_obj *o = rb_entry(nd, struct rl_obj, node);

		if (o->start <= addr) {
			best = o;
			nd = nd->rb_right;
		} else {
			nd = nd->rb_left;
		}
	}
	return best;
}

static struct rl_obj *rl_find(struct rb_root *root, u64 addr)
{
	struct rl_obj *o = rl_floor(root, addr);

	if (!o)
		return NULL;
	/* inferred objects have no known size: up to the learned offset */
	if (o->size ? addr - o->start < o->size : addr - o->start <= o->site->ref_offset)
		return o;
	return NULL;
}

/* the live object an address is in */
static struct rl_obj *rl_live_find(struct refleak *rl, u64 addr)
{
	struct rl_obj *o = rl->last_live;

	if (o && addr - o->start < o->size)
		return o;
	o = rl_find(&rl->live, addr);
	if (o)
		rl->last_live = o;
	return o;
}

static void rl_live_erase(struct refleak *rl, struct rl_obj *o)
{
	if (rl->last_live == o)
		rl->last_live = NULL;
	rb_erase(&o->node, &rl->live);
}

static void rl_insert(struct rb_root *root, struct rl_obj *obj)
{
	struct rb_node **p = &root->rb_node, *parent = NULL;

	while (*p) {
		struct rl_obj *o = rb_entry(*p, struct rl_obj, node);

		parent = *p;
		if (obj->start < o->start)
			p = &(*p)->rb_left;
		else
			p = &(*p)->rb_right;
	}
	rb_link_node(&obj->node, parent, p);
	rb_insert_color(&obj->node, root);
}

static void rl_grave_remove(struct refleak *rl, struct rl_obj *o)
{
	rb_erase(&o->node, &rl->grave);
	list_del(&o->fifo);
	rl->nr_grave--;
}

/*
 * Insert into the graveyard, whose starts are unique: an object buried at
 * the same start (the address was freed, reused, freed again) is replaced
 * in the same walk and returned.
 */
static struct rl_obj *rl_grave_insert(struct refleak *rl, struct rl_obj *obj)
{
	struct rb_node **p = &rl->grave.rb_node, *parent = NULL;

	while (*p) {
		struct rl_obj *o = rb_entry(*p, struct rl_obj, node);

		parent = *p;
		if (obj->start < o->start) {
			p = &(*p)->rb_left;
		} else if (obj->start > o->start) {
			p = &(*p)->rb_right;
		} else {
			rb_replace_node(&o->node, &obj->node, &rl->grave);
			return o;
		}
	}
	rb_link_node(&obj->node, parent, p);
	rb_insert_color(&obj->node, &rl->grave);
	return NULL;
}

static void rl_bury(struct refleak *rl, struct rl_obj *o)
{
	struct rl_obj *old = rl_grave_insert(rl, o);

	list_add_tail(&o->fifo, &rl->grave_fifo);
	rl->nr_grave++;
	if (old) {
		list_del(&old->fifo);
		rl->nr_grave--;
		rl_retire(rl, old, rl->now);
	}
	while (rl->nr_grave > rl->cfg.graveyard_max) {
		old = list_first_entry(&rl->grave_fifo, struct rl_obj, fifo);
		rl_grave_remove(rl, old);
		rl_retire(rl, old, rl->now);
	}
}

static void rl_orphan_remove(struct refleak *rl, struct rl_orphan *orph)
{
	hashmap__delete(rl->orphans, orph->obj, NULL, NULL);
	list_del(&orph->fifo);
	free(orph);
}

/* move time forward: expire graveyard and old unmatched puts */
static void rl_advance(struct refleak *rl, u64 time)
{
	if (!rl->started) {
		rl->started = true;
		rl->stats.first_ns = time;
		rl->now = time;
	}
	if (time < rl->now) {
		rl->stats.nr_out_of_order++;
		return;
	}
	rl->now = time;
	rl->stats.last_ns = time;

	while (!list_empty(&rl->grave_fifo)) {
		struct rl_obj *o = list_first_entry(&rl->grave_fifo, struct rl_obj, fifo);

		if (o->free_ns + rl->cfg.graveyard_ns >= time)
			break;
		rl_grave_remove(rl, o);
		rl_retire(rl, o, time);
	}
	while (!list_empty(&rl->orphan_fifo)) {
		struct rl_orphan *orph = list_first_entry(&rl->orphan_fifo, struct rl_orphan, fifo);

		if (orph->time + rl->cfg.graveyard_ns >= time)
			break;
		rl_orphan_remove(rl, orph);
	}
}

static bool rl_bad_ptr(u64 ptr)
{
	return ptr == 0 || ptr >= (u64)-4095;	/* NULL or ERR_PTR */
}

/*
 * Addresses given to kfree_rcu() whose free event has not come yet.  The
 * free that comes is the allocator finishing what its owner asked for:
 * consumed here, it is neither an unmatched free nor a second free.
 */
static int rl_rcu_pending_add(struct refleak *rl, u64 ptr, u64 time)
{
	int err = hashmap__set(rl->rcu_pending, ptr, time, NULL, NULL);

	return err == -ENOMEM ? err : 0;
}

static bool rl_rcu_pending_del(struct refleak *rl, u64 ptr)
{
	if (!hashmap__size(rl->rcu_pending))
		return false;
	return hashmap__delete(rl->rcu_pending, ptr, NULL, NULL);
}

int refleak__alloc(struct refleak *rl, const struct refleak_alloc_ev *ev)
{
	const char *cache = rl_intern_str(rl, ev->cache ? ev->cache : REFLEAK_KMALLOC);
	u64 size = ev->bytes_alloc ? ev->bytes_alloc : 1;
	struct rl_obj *o;

	rl_advance(rl, ev->time);
	rl->stats.nr_alloc++;
	if (rl_bad_ptr(ev->ptr)) {
		rl->stats.nr_ignored_alloc++;
		return 0;
	}
	if (!cache)
		return -ENOMEM;

	/* a kfree_rcu()'d address reused: its deferred free was not seen */
	rl_rcu_pending_del(rl, ev->ptr);

	/* live objects overlapping the new one: their free was not seen */
	while ((o = rl_floor(&rl->live, ev->ptr + size - 1)) != NULL &&
	       o->start + o->size > ev->ptr) {
		rl_live_erase(rl, o);
		rl->stats.nr_live_end--;
		rl->stats.nr_missed_free++;
		o->freed = true;
		o->free_ns = ev->time;
		o->uncertain = true;
		rl_bury(rl, o);
	}

	o = rl_obj__new(rl);
	if (!o)
		return -ENOMEM;
	o->site = rl_site(rl, ev->call_site, cache);
	if (!o->site) {
		rl_obj__free(rl, o);
		return -ENOMEM;
	}
	o->start = ev->ptr;
	o->size = size;
	o->alloc_ns = ev->time;
	o->pid = ev->pid;
	o->tid = ev->tid;
	o->filtered = ev->filtered;
	o->stack[REFLEAK_STACK_ALLOC] = ev->stack;
	rl_insert(&rl->live, o);
	rl->last_live = o;
	if (++rl->stats.nr_live_end > rl->stats.max_live)
		rl->stats.max_live = rl->stats.nr_live_end;
	return 0;
}

/* a free of an address with no known allocation: an object from before the recording */
static int rl_free_unknown(struct refleak *rl, const struct refleak_free_ev *ev, const char *cache)
{
	struct rl_offsets *offs = cache ? rl_cache_offsets(rl, cache, false) : &rl->all_offsets;
	struct rl_orphan *orph = NULL;
	const struct rl_offset *match = NULL;
	struct rl_obj *o;
	u32 i;

	for (i = 0; offs && i < offs->nr; i++) {
		if (hashmap__find(rl->orphans, ev->ptr + offs->off[i].offset, &orph)) {
			match = &offs->off[i];
			break;
		}
	}
	if (!match) {
		/*
		 * A refcounted cache freeing an object we never saw put: only
		 * believe it once the recording is older than min-age, before
		 * that the final put may have preceded the recording (RCU).
		 */
		if (!cache || !offs || !offs->nr ||
		    ev->time < rl->stats.first_ns + rl->cfg.min_age_ns) {
			rl->stats.nr_unmatched_free++;
			return 0;
		}
		match = &offs->off[0];
	}

	o = rl_obj__new(rl);
	if (!o)
		return -ENOMEM;
	o->site = rl_site(rl, 0, match->cache);
	if (!o->site) {
		rl_obj__free(rl, o);
		return -ENOMEM;
	}
	o->site->refcounted = true;
	if (!o->site->offset_known) {
		o->site->offset_known = true;
		o->site->ref_offset = match->offset;
	} else if (o->site->ref_offset != match->offset) {
		o->site->offset_mixed = true;
	}
	o->start = ev->ptr;
	o->size = 0;
	o->inferred = true;
	o->freed = true;
	o->free_ns = ev->time;
	o->stack[REFLEAK_STACK_FREE] = ev->stack;
	if (orph) {
		o->nr_puts = orph->count;
		o->put_ns = orph->time;
		o->last_put_ns = orph->time2 ? orph->time2 : orph->time;
		o->stack[REFLEAK_STACK_PUT] = orph->stack;
		o->put2_ns = orph->time2;
		o->put2_stack = orph->stack2;
		rl->nr_orphan_matched += orph->count;
		rl->stats.nr_inferred_matches++;
		rl_orphan_remove(rl, orph);
	}
	rl_bury(rl, o);
	return 0;
}

/*
 * An object that reached zero on every counter and was freed: how long the
 * objects of its allocation stack live (siblings_died), and whether its site
 * takes several counters to zero (counter_left).
 */
static void rl_died(struct refleak *rl, const struct rl_obj *o, u64 time)
{
	u32 id = rl_alloc_path(rl, o->stack[REFLEAK_STACK_ALLOC]);
	struct rl_stack_life *st;

	if (o->nr_ctrs >= 2)
		o->site->nr_freed_all_zero++;
	st = rl_stack_life(rl, id);
	if (!st || !o->alloc_ns)
		return;
	if (!st->nr_died++ || o->alloc_ns < st->died_first_ns)
		st->died_first_ns = o->alloc_ns;
	if (o->alloc_ns > st->died_last_ns)
		st->died_last_ns = o->alloc_ns;
	if (time - o->alloc_ns > st->max_life_ns)
		st->max_life_ns = time - o->alloc_ns;
}

int refleak__free(struct refleak *rl, const struct refleak_free_ev *ev)
{
	const char *cache = ev->cache ? rl_intern_str(rl, ev->cache) : NULL;
	struct rl_obj *o;

	rl_advance(rl, ev->time);
	if (ev->deferred)
		rl->stats.nr_rcu_requests++;
	else
		rl->stats.nr_free++;
	if (rl_bad_ptr(ev->ptr))
		return 0;

	o = rl_live_find(rl, ev->ptr);
	if (ev->deferred) {
		if (rl_rcu_pending_add(rl, ev->ptr, ev->time))
			return -ENOMEM;
		if (!o)		/* allocated before the recording */
			return 0;
	} else if (rl_rcu_pending_del(rl, ev->ptr)) {
		rl->stats.nr_rcu_freed++;
		if (!o)
			return 0;
	}
	if (!o)
		return rl_free_unknown(rl, ev, cache);

	rl_live_erase(rl, o);
	rl->stats.nr_live_end--;
	if (o->nr_puts) {
		o->site->nr_freed_after_zero++;
		if (!rl_obj__live_ctr(o))
			rl_died(rl, o, ev->time);
	} else if (rl_obj__live_ctr(o)) {
		o->site->nr_freed_live_ctr++;
	}
	o->freed = true;
	o->free_ns = ev->time;
	o->stack[REFLEAK_STACK_FREE] = ev->stack;
	if (o->nr_puts) {
		if (o->last_put_ns > o->site->max_freed_put_ns)
			o->site->max_freed_put_ns = o->last_put_ns;
		if (ev->time - o->last_put_ns > o->site->max_put_free_ns)
			o->site->max_put_free_ns = ev->time - o->last_put_ns;
	}
	rl_bury(rl, o);
	return 0;
}

int refleak__final_put(struct refleak *rl, const struct refleak_put_ev *ev)
{
	struct rl_orphan *orph;
	struct rl_obj *o;

	rl_advance(rl, ev->time);
	rl->stats.nr_put++;

	o = rl_live_find(rl, ev->obj);
	if (o) {
		struct rl_ctr *ctr = rl_ctr(o, ev->obj - o->start, true);

		if (ctr)
			ctr->state = RL_CTR_ZERO;
		if (o->ledger &&
		    refleak_ledger__final(o->ledger, ev->obj - o->start, ev->stack, ev->time,
					  ev->pid) < 0)
			return -ENOMEM;
		o->last_put_ns = ev->time;
		if (o->nr_puts == 0) {
			o->put_ns = ev->time;
			o->put_pid = ev->pid;
			o->put_ref = ev->obj;
			o->stack[REFLEAK_STACK_PUT] = ev->stack;
			rl_site_learn(rl, o->site, ev->obj - o->start);
		} else if (ev->obj != o->put_ref) {
			/*
			 * Another refcount of the same object reached zero
			 * (task_struct has usage, rcu_users and stack_refcount):
			 * its own final put, not a second one of the first.
			 */
			return 0;
		} else if (o->nr_puts == 1) {
			o->put2_ns = ev->time;
			o->put2_stack = ev->stack;
		}
		o->nr_puts++;
		return 0;
	}

	o = rl_find(&rl->grave, ev->obj);
	if (o) {
		if (!o->put_after_free) {
			o->put_after_free = true;
			o->late_ns = ev->time;
			o->late_stack = ev->stack;
		}
		if (!o->inferred)
			rl_site_learn(rl, o->site, ev->obj - o->start);
		return 0;
	}

	/* no known object: allocated before the recording started */
	rl->nr_orphan_puts++;
	if (hashmap__find(rl->orphans, ev->obj, &orph)) {
		if (orph->count++ == 1) {
			orph->time2 = ev->time;
			orph->stack2 = ev->stack;
		}
		return 0;
	}
	orph = zalloc(sizeof(*orph));
	if (!orph)
		return -ENOMEM;
	orph->obj = ev->obj;
	orph->time = ev->time;
	orph->stack = ev->stack;
	orph->count = 1;
	if (hashmap__add(rl->orphans, ev->obj, orph)) {
		free(orph);
		return -ENOMEM;
	}
	list_add_tail(&orph->fifo, &rl->orphan_fifo);
	return 0;
}

int refleak__set(struct refleak *rl, const struct refleak_set_ev *ev)
{
	struct rl_ctr *ctr;
	struct rl_obj *o;

	rl_advance(rl, ev->time);
	rl->stats.nr_set++;

	o = rl_live_find(rl, ev->obj);
	if (!o) {
		/* static or stack memory, or allocated before the recording */
		rl->stats.nr_unmatched_set++;
		return 0;
	}
	ctr = rl_ctr(o, ev->obj - o->start, true);
	if (ev->count <= 0) {
		if (ctr)
			ctr->state = RL_CTR_RETIRED;
		return 0;
	}
	if (ctr)
		ctr->state = RL_CTR_LIVE;
	if (!o->set_count) {
		o->set_stack = ev->stack;
		o->set_offset = ev->obj - o->start;
		o->set_count = ev->count > INT_MAX ? INT_MAX : ev->count;
		o->set_pid = ev->pid;
		o->set_ns = ev->time;
		if (rl_cache_traced(rl, o->site->cache) &&
		    refleak_ledger__birth(&o->ledger, o->set_offset, ev->stack, o->set_count,
					  ev->time, ev->pid) < 0)
			return -ENOMEM;
	} else if (ev->obj - o->start != o->set_offset && rl_cache_traced(rl, o->site->cache) &&
		   refleak_ledger__birth(&o->ledger, ev->obj - o->start, ev->stack,
					 ev->count > INT_MAX ? INT_MAX : ev->count, ev->time,
					 ev->pid) < 0) {
		/* another counter of the object: a ledger of its own */
		return -ENOMEM;
	}
	if (o->nr_puts && ev->obj == o->put_ref) {
		/* revived (percpu_ref_resurrect(), refcount_set() on reuse): a new life */
		rl->stats.nr_revived++;
		o->nr_puts = 0;
		o->put_ns = 0;
		o->last_put_ns = 0;
		o->put2_ns = 0;
		o->stack[REFLEAK_STACK_PUT] = 0;
		o->put2_stack = 0;
	}
	rl_site_learn(rl, o->site, ev->obj - o->start);
	return 0;
}

/* an anomaly on a counter in no known allocation: grouped by its caller */
static int rl_anomaly_orphan(struct refleak *rl, const struct refleak_anomaly_ev *ev)
{
	struct rl_obj o = { .anomaly = ev->type + 1, };
	const char *none = rl_intern_str(rl, "-");
	struct refleak_site *site;
	struct refleak_group *g;

	if (!none)
		return -ENOMEM;
	site = rl_site(rl, ev->caller, none);
	if (!site)
		return -ENOMEM;
	site->no_alloc = true;
	g = rl_group(site, rl_anomaly_class(&o));
	if (!g)
		return -ENOMEM;
	g->count++;
	g->counters |= rl_counter_bit(ev->counter);
	rl_group__add_stack(g, REFLEAK_STACK_PUT, ev->stack);
	if (rl_lost_overlap(rl, ev->time, ev->time))
		g->nr_uncertain++;
	return 0;
}

int refleak__anomaly(struct refleak *rl, const struct refleak_anomaly_ev *ev)
{
	struct rl_obj *o;

	rl_advance(rl, ev->time);
	rl->stats.nr_anomaly++;
	if (ev->type >= REFLEAK_NR_ANOMALIES)
		return 0;

	o = rl_live_find(rl, ev->obj);
	if (o) {
		/* a saturated counter reports every later put: keep the first */
		o->counters |= rl_counter_bit(ev->counter);
		if (!o->anomaly) {
			o->anomaly = ev->type + 1;
			o->anomaly_ns = ev->time;
			o->anomaly_stack = ev->stack;
		}
		rl_site_learn(rl, o->site, ev->obj - o->start);
		return 0;
	}
	o = rl_find(&rl->grave, ev->obj);
	if (o) {
		if (!o->put_after_free) {
			o->put_after_free = true;
			o->late_anomaly = true;
			o->late_ns = ev->time;
			o->late_stack = ev->stack;
		}
		return 0;
	}
	return rl_anomaly_orphan(rl, ev);
}

int refleak__ref(struct refleak *rl, const struct refleak_ref_ev *ev)
{
	u32 offset;
	struct rl_obj *o;
	int err;

	rl_advance(rl, ev->time);
	rl->stats.nr_ref++;
	o = rl_live_find(rl, ev->obj);
	if (!o) {
		/* allocated before the recording, or not in a slab object */
		rl->stats.nr_unmatched_ref++;
		return 0;
	}
	o->counters |= rl_counter_bit(ev->counter);
	if (!rl_cache_traced(rl, o->site->cache)) {
		err = hashmap__set(rl->traced_caches, (long)o->site->cache, RL_CACHE_TRACED,
				   NULL, NULL);
		if (err)
			return err;
	}
	offset = ev->obj - o->start;
	if (!o->ledger && o->set_count > 0 && o->set_offset == offset) {
		err = refleak_ledger__birth(&o->ledger, offset, o->set_stack, o->set_count, 0,
					    o->pid);
		if (err < 0)
			return err;
	}
	err = refleak_ledger__ref(&o->ledger, offset, ev->stack, ev->old, ev->delta, ev->time,
				  ev->pid);
	return err < 0 ? err : 0;
}

int refleak__site_sum(struct refleak *rl, const struct refleak_site_sum *sum)
{
	const char *cache = rl_intern_str(rl, sum->cache);
	struct refleak_site *site = cache ? rl_site(rl, sum->call_site, cache) : NULL;
	struct rl_stack_life *st = rl_stack_life(rl, rl_alloc_path(rl, sum->stack));
	struct rl_offsets *offs;
	struct refleak_group *g;
	u32 i;

	if (!site)
		return -ENOMEM;
	site->nr_freed_after_zero += sum->nr_freed_after_zero;
	site->nr_freed_live_ctr += sum->nr_freed_live_ctr;
	site->nr_freed_all_zero += sum->nr_freed_all_zero;
	site->max_freed_put_ns = max(site->max_freed_put_ns, sum->max_freed_put_ns);
	site->max_put_free_ns = max(site->max_put_free_ns, sum->max_put_free_ns);
	if (sum->nr_puts_at_offset) {
		rl_site_learn(rl, site, sum->put_offset);
		/* as many final puts there as the site had */
		offs = rl_cache_offsets(rl, site->cache, false);
		for (i = 0; offs && i < offs->nr; i++)
			if (offs->off[i].offset == sum->put_offset)
				offs->off[i].nr_puts += sum->nr_puts_at_offset - 1;
	}
	if (st && sum->nr_died) {
		if (!st->nr_died || sum->died_first_ns < st->died_first_ns)
			st->died_first_ns = sum->died_first_ns;
		st->died_last_ns = max(st->died_last_ns, sum->died_last_ns);
		st->max_life_ns = max(st->max_life_ns, sum->max_life_ns);
		st->nr_died += sum->nr_died;
	}
	g = rl_group(site, REFLEAK_BALANCED);
	if (!g)
		return -ENOMEM;
	g->count += sum->nr_balanced;
	g->nr_born += sum->nr_balanced;
	rl->stats.nr_alloc += sum->nr_balanced;
	rl->stats.nr_free += sum->nr_balanced;
	return 0;
}

int refleak__exit(struct refleak *rl, int pid, u64 time)
{
	rl->stats.nr_exits++;
	if (pid <= 0)
		return 0;
	return hashmap__set(rl->exits, pid, time, NULL, NULL) ? -ENOMEM : 0;
}

int refleak__fork(struct refleak *rl, int ppid, int pid, u64 time)
{
	rl->stats.nr_forks++;
	if (ppid <= 0 || pid <= 0 || ppid == pid)
		return 0;
	if (hashmap__set(rl->fork_parent, pid, ppid, NULL, NULL) ||
	    hashmap__set(rl->fork_time, pid, time, NULL, NULL))
		return -ENOMEM;
	return 0;
}

/*
 * A process forked at @forked running at the end, or that exited less than
 * min-age before it (an exit before its fork was its pid's previous owner's)
 */
static bool rl_running(struct refleak *rl, int pid, u64 forked, u64 end_ns)
{
	long exit_ns;

	return !hashmap__find(rl->exits, pid, &exit_ns) || (u64)exit_ns < forked ||
	       (u64)exit_ns + rl->cfg.min_age_ns > end_ns;
}

/* fork chains followed up from a running process, at the most */
#define REFLEAK_MAX_FORK_DEPTH	64

/*
 * handed_on: for each process, the latest time it forked a process of
 * which a descendant is running at the end.  What it allocated before that
 * fork may be the descendant's (its mm, its files, its sockets).
 */
static void rl_handed_on(struct refleak *rl, u64 end_ns)
{
	struct hashmap_entry *cur;
	size_t bkt;

	hashmap__for_each_entry(rl->fork_parent, cur, bkt) {
		long child = cur->key, parent = cur->value, t, have;
		int depth = 0;

		if (!hashmap__find(rl->fork_time, child, &t) || !rl_running(rl, child, t, end_ns))
			continue;
		while (depth++ < REFLEAK_MAX_FORK_DEPTH &&
		       hashmap__find(rl->fork_time, child, &t)) {
			if (!hashmap__find(rl->handed_on, parent, &have) || have < t)
				hashmap__set(rl->handed_on, parent, t, NULL, NULL);
			child = parent;
			if (!hashmap__find(rl->fork_parent, child, &parent))
				break;
		}
	}
}

static bool rl_group__reported(const struct refleak_group *g)
{
	if (g->class == REFLEAK_FREED_WITHOUT_FINAL_PUT ||
	    g->class == REFLEAK_OUTSTANDING)
		return g->site->refcounted || g->nr_born;
	return true;
}

/*
 * A live object may be judged a likely leak when it was allocated in the
 * recording, is refcounted (counter seen born, or a refcounted site), is at
 * least min-age old, and nothing the recording missed could explain it: no
 * lost event since its birth, and its site does not mostly free objects
 * whose counter never reached zero (an sk_buff's last reference is dropped
 * without a put to zero).
 */
static bool rl_judged_live(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	if (o->anomaly || !o->alloc_ns || o->filtered)
		return false;
	/* with a counter at zero, another one must hold references */
	if (!rl_obj__live_ctr(o) && (o->nr_puts || !rl_site__refcounted(rl, o->site)))
		return false;
	if (rl_lost_overlap(rl, o->alloc_ns, end_ns))
		return false;
	if (o->site->nr_freed_live_ctr > o->site->nr_freed_after_zero)
		return false;
	return end_ns >= o->alloc_ns + rl->cfg.min_age_ns;
}

/*
 * owner_exited: the process that allocated it exited at least min-age
 * before the end, so its own exit path, RCU callbacks and deferred work had
 * time to release it, and so did every process it forked after allocating
 * it (a fork hands on what the child inherits: the parent allocates the
 * child's mm and its VMAs).  An object allocated in an interrupt has no
 * owner: the task the interrupt stopped (a TIME_WAIT socket made by the
 * softirq a process's send ran) did not make it for itself.
 */
static bool rl_owner_exited(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	u32 stack = o->stack[REFLEAK_STACK_ALLOC];
	long exit_ns, forked;

	if (o->nr_puts || o->pid <= 0 || rl_alloc_path(rl, stack) != stack)
		return false;
	if (!hashmap__find(rl->exits, o->pid, &exit_ns) || (u64)exit_ns < o->alloc_ns)
		return false;
	if (hashmap__find(rl->handed_on, o->pid, &forked) && (u64)forked >= o->alloc_ns)
		return false;
	return (u64)exit_ns + rl->cfg.min_age_ns <= end_ns;
}

/*
 * siblings_died, first half: at least min-repeat objects of its allocation
 * stack reached zero and were freed, and it has lived sibling-factor times
 * longer than the longest of them (and min-age).  Allocated by a kernel
 * worker, in an interrupt or by a process still running, a leaked object
 * has no owner to outlive; its siblings show how long the path keeps one.
 */
static struct rl_stack_life *rl_outlived(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	u32 id = rl_alloc_path(rl, o->stack[REFLEAK_STACK_ALLOC]);
	struct rl_stack_life *st;
	u64 life;

	st = rl_stack_life(rl, id);
	if (o->nr_puts || !st || st->nr_died < rl->cfg.min_repeat)
		return NULL;
	life = st->max_life_ns * rl->cfg.sibling_factor;
	if (life < rl->cfg.min_age_ns)
		life = rl->cfg.min_age_ns;
	return end_ns - o->alloc_ns >= life ? st : NULL;
}

/*
 * A struct file (the "filp" cache) allocated by a process still running:
 * its opener's descriptor table holds its birth reference for as long as
 * it is open, and the file's siblings that died young were closed.  Its
 * surviving them says nothing (another perf session's event descriptors,
 * opened while its probes came and went): no siblings_died.
 */
static bool rl_file_of_running(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	return o->pid > 0 && o->site->cache && !strcmp(o->site->cache, REFLEAK_FILE_CACHE) &&
	       rl_running(rl, o->pid, o->alloc_ns, end_ns);
}

/*
 * siblings_died: the survivors are at least one object in that many of
 * their stack's.  A leaking path leaks every time it runs; a few objects
 * kept out of thousands (a service's connections, its processes' mm) are
 * kept on purpose as often as not, and stay possible.
 */
#define REFLEAK_SIBLING_SHARE	10

/*
 * siblings_died, second half: the survivors kept accumulating while their
 * siblings came and went -- siblings were born between the first and the
 * last survivor, and the survivors' births span at least half of the span
 * of every birth at the stack -- and are a share of the stack's objects.
 * A pool or cache filled once (connections opened at start, kept to the
 * end) outlives its siblings too, but its births are all at the
 * beginning; a leak grows with the path that leaks.
 */
static bool rl_accumulating(const struct rl_stack_life *st)
{
	u64 first = min(st->died_first_ns, st->surv_first_ns);
	u64 last = max(st->died_last_ns, st->surv_last_ns);

	if (st->nr_survivors * REFLEAK_SIBLING_SHARE < st->nr_survivors + st->nr_died)
		return false;
	if (st->died_first_ns >= st->surv_last_ns || st->died_last_ns <= st->surv_first_ns)
		return false;
	return 2 * (st->surv_last_ns - st->surv_first_ns) >= last - first;
}

/*
 * counter_left: one of its counters reached zero at least min-age before
 * the end and another is still live (a main count put, a passive count
 * kept), while at least min-repeat objects of its site took every counter
 * to zero and were freed.
 */
static bool rl_counter_left(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	if (!o->nr_puts || o->nr_ctrs < 2)
		return false;
	if (o->site->nr_freed_all_zero < rl->cfg.min_repeat)
		return false;
	return o->last_put_ns + rl->cfg.min_age_ns <= end_ns;
}

/*
 * The process @pid that took a reference at @time holds it no more: it
 * exited at least min-age before the end, and the reference was not taken
 * for a child it forked (copy_process() takes the child's references on
 * what it inherits -- files, fs, mm -- in the parent).  A reference taken
 * in an interrupt or by the idle task (pid 0) has no process to tell:
 * held, as far as this goes.
 */
static bool rl_taker_gone(void *arg, int pid, u64 time, u32 stack)
{
	struct refleak *rl = arg;
	long exit_ns;

	if (pid <= 0 || !hashmap__find(rl->exits, pid, &exit_ns) || (u64)exit_ns < time ||
	    (u64)exit_ns + rl->cfg.min_age_ns > rl->now)
		return false;
	return !refleak_stacks__in_fork(rl->stacks, stack);
}

/*
 * past_last_put: its gets and puts were recorded, and one of its counters
 * got, at least min-age before the end, a put that ended min-repeat of
 * its site's balanced objects -- the last put they got, a put that never
 * came earlier in one of them -- and still holds references, each taken
 * by a process that exited since.  What put the others for good came,
 * and what is left has no holder: a reference never put, whoever
 * allocated the object and whether or not they still run.  A reference
 * a running process took may be held on purpose (the descriptor a dup()
 * made, a file in flight in an SCM_RIGHTS message).
 */
static bool rl_past_last_put(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	if (!o->ledger || o->uncertain || end_ns < rl->cfg.min_age_ns)
		return false;
	return refleak_refs__past_last_put(rl->stacks, o->site, o->ledger, rl->cfg.min_repeat,
					   end_ns - rl->cfg.min_age_ns, rl_taker_gone, rl);
}

/*
 * call_ref_held: its gets and puts were recorded, and it holds, since at
 * least min-age and sibling-factor times longer than any of theirs, a
 * reference that min-repeat balanced objects of its site took and always
 * put in the same call, in the process that took it: a reference a call
 * takes for its own use, which the call forgot to put on some path,
 * whoever took it and whether or not they still run.
 */
static bool rl_call_ref_held(struct refleak *rl, struct rl_obj *o, u64 end_ns)
{
	if (!o->ledger || o->uncertain)
		return false;
	return refleak_refs__call_ref_held(rl->stacks, o->site, o->ledger, rl->cfg.min_repeat,
					   end_ns, rl->cfg.min_age_ns, rl->cfg.sibling_factor);
}

/*
 * Held by running processes: every reference it holds was taken by a
 * user process still running, at a get whose references min-repeat
 * balanced objects of its site had put by the process that took them or
 * after it exited -- a descriptor still open, the state of a process
 * still running.  Without gets and puts, its birth is what it holds.  Its
 * lifetime then says nothing of a leak: no owner_exited, siblings_died
 * or counter_left.
 */
static bool rl_held_by_running(struct refleak *rl, struct rl_obj *o)
{
	if (o->uncertain)
		return false;
	if (o->ledger)
		return refleak_refs__held_by_running(rl->stacks, o->site, o->ledger,
						     rl->cfg.min_repeat, &rl->tasks);
	if (o->set_count <= 0 || o->nr_puts || o->nr_ctrs > 1)
		return false;
	return refleak_refs__birth_held_by_running(rl->stacks, o->site, o->set_stack,
						   o->set_pid, o->set_ns, rl->cfg.min_repeat,
						   &rl->tasks);
}

/* key of the repetition count: the allocation path, or the site without a stack */
static long rl_repeat_key(struct refleak *rl, const struct rl_obj *o)
{
	return o->stack[REFLEAK_STACK_ALLOC] ?
	       (long)rl_alloc_path(rl, o->stack[REFLEAK_STACK_ALLOC]) :
	       -(long)(unsigned long)o->site;
}

/*
 * Likely leaks: live objects with evidence whose allocation stack left at
 * least min-repeat of them.  A leak on a common path leaks every time the
 * path runs; a single object kept is as often a cache filled once.
 */
static void rl_mark_likely(struct refleak *rl, u64 end_ns)
{
	struct hashmap *repeat = hashmap__new(u64_hash, u64_equal, NULL);
	struct rb_node *nd;
	u32 i;

	if (IS_ERR(repeat))
		return;
	rl_handed_on(rl, end_ns);
	for (i = 0; i < rl->nr_stack_life; i++) {
		rl->stack_life[i].nr_survivors = 0;
		rl->stack_life[i].surv_last_ns = 0;
	}
	for (nd = rb_first(&rl->live); nd; nd = rb_next(nd)) {
		struct rl_obj *o = rb_entry(nd, struct rl_obj, node);
		struct rl_stack_life *st;

		if (!rl_judged_live(rl, o, end_ns))
			continue;
		if (rl_past_last_put(rl, o, end_ns))
			o->evidence |= 1 << REFLEAK_EVIDENCE_PAST_LAST_PUT;
		if (rl_call_ref_held(rl, o, end_ns))
			o->evidence |= 1 << REFLEAK_EVIDENCE_CALL_REF_HELD;
		if (!o->evidence && rl_held_by_running(rl, o)) {
			/* its holders are still there: its lifetime says nothing more */
			rl->stats.nr_held_by_running++;
			continue;
		}
		if (rl_owner_exited(rl, o, end_ns))
			o->evidence |= 1 << REFLEAK_EVIDENCE_OWNER_EXITED;
		if (rl_counter_left(rl, o, end_ns))
			o->evidence |= 1 << REFLEAK_EVIDENCE_COUNTER_LEFT;
		st = rl_file_of_running(rl, o, end_ns) ? NULL : rl_outlived(rl, o, end_ns);
		if (st) {
			/* the live tree is in address order, not time order */
			o->evidence |= 1 << REFLEAK_EVIDENCE_SIBLINGS_DIED;
			if (!st->nr_survivors++ || o->alloc_ns < st->surv_first_ns)
				st->surv_first_ns = o->alloc_ns;
			if (o->alloc_ns > st->surv_last_ns)
				st->surv_last_ns = o->alloc_ns;
		}
	}
	for (nd = rb_first(&rl->live); nd; nd = rb_next(nd)) {
		struct rl_obj *o = rb_entry(nd, struct rl_obj, node);
		u32 id = rl_alloc_path(rl, o->stack[REFLEAK_STACK_ALLOC]);
		long n = 0;

		if ((o->evidence & (1 << REFLEAK_EVIDENCE_SIBLINGS_DIED)) &&
		    !rl_accumulating(rl_stack_life(rl, id)))
			o->evidence &= ~(1 << REFLEAK_EVIDENCE_SIBLINGS_DIED);
		if (!o->evidence)
			continue;
		hashmap__find(repeat, rl_repeat_key(rl, o), &n);
		hashmap__set(repeat, rl_repeat_key(rl, o), n + 1, NULL, NULL);
	}
	for (nd = rb_first(&rl->live); nd; nd = rb_next(nd)) {
		struct rl_obj *o = rb_entry(nd, struct rl_obj, node);
		long n = 0;

		if (o->evidence && hashmap__find(repeat, rl_repeat_key(rl, o), &n))
			o->likely = n >= (long)rl->cfg.min_repeat;
		if (!o->likely)
			o->evidence = 0;
	}
	hashmap__free(repeat);
}

/* does the stack have a frame in function @func? */
static bool rl_stack_in(struct refleak *rl, u32 id, u64 func)
{
	u32 nr, i;
	const u64 *ips = refleak_stacks__get(rl->stacks, id, &nr);

	for (i = 0; i < nr; i++)
		if (refleak_stacks__func(rl->stacks, ips[i]) == func)
			return true;
	return false;
}

/*
 * A leak that keeps another alive: when every reference the objects of a
 * group were certainly never put was taken inside the function that
 * allocated the objects of a likely_leak group of another site, those
 * objects hold them (a constructor storing a reference, as a mark does its
 * group's, a sock its namespace's): they are the root to audit, and this
 * group is held_by them.  Only the group's most common list is looked at.
 */
static void rl_find_holders(struct refleak *rl)
{
	struct refleak_group **leaks, *g, *h;
	size_t i, j, nr_leaks = 0;
	u32 s;

	if (!rl->cfg.symbol)
		return;
	leaks = calloc(rl->nr_sites + 1, sizeof(*leaks));
	if (!leaks)
		return;
	for (i = 0; i < rl->nr_sites; i++)
		if (rl->site_array[i]->groups[REFLEAK_LIKELY_LEAK] && rl->site_array[i]->call_site)
			leaks[nr_leaks++] = rl->site_array[i]->groups[REFLEAK_LIKELY_LEAK];
	for (i = 0; i < rl->nr_sites; i++) {
		static const enum refleak_class held[] = {
			REFLEAK_LIKELY_LEAK, REFLEAK_OUTSTANDING,
		};
		size_t c;

		for (c = 0; c < ARRAY_SIZE(held); c++) {
			struct refleak_unput **unput, *u;
			size_t nr;

			g = rl->site_array[i]->groups[held[c]];
			if (!g)
				continue;
			unput = refleak_refs__unput(g, &nr);
			u = nr ? unput[0] : NULL;
			free(unput);
			if (!u || !u->certain)
				continue;
			for (j = 0; j < nr_leaks && !g->held_by; j++) {
				u64 func;

				h = leaks[j];
				if (h->site == g->site)
					continue;
				func = refleak_stacks__func(rl->stacks, h->site->call_site);
				if (!func)
					continue;
				for (s = 0; s < u->nr_stacks; s++)
					if (!rl_stack_in(rl, u->stacks[s].stack, func))
						break;
				if (s == u->nr_stacks)
					g->held_by = h;
			}
		}
	}
	free(leaks);
}

int refleak__finish(struct refleak *rl, u64 end_ns)
{
	struct rb_node *nd;
	size_t i;

	if (rl->finished)
		return 0;
	rl->finished = true;
	if (!rl->started)
		rl->stats.first_ns = end_ns;
	if (end_ns < rl->now)
		end_ns = rl->now;
	rl->now = end_ns;
	rl->stats.last_ns = end_ns;

	while (!list_empty(&rl->grave_fifo)) {
		struct rl_obj *o = list_first_entry(&rl->grave_fifo, struct rl_obj, fifo);

		rl_grave_remove(rl, o);
		rl_retire(rl, o, end_ns);
	}
	rl_mark_likely(rl, end_ns);
	nd = rb_first(&rl->live);
	while (nd) {
		struct rl_obj *o = rb_entry(nd, struct rl_obj, node);

		nd = rb_next(nd);
		rl_live_erase(rl, o);
		rl_retire(rl, o, end_ns);
	}
	/* every balanced object has taught its site: name what the others kept */
	for (i = 0; i < rl->nr_pending; i++) {
		struct rl_pending *p = &rl->pending[i];

		refleak_refs__name(rl->stacks, p->group,
				   refleak_refs__kept(p->group->site, p->ledger), p->uncertain);
		refleak_ledger__delete(p->ledger);
	}
	rl->nr_pending = 0;
	rl_find_holders(rl);

	rl->stats.nr_unmatched_put = rl->nr_orphan_puts - rl->nr_orphan_matched;
	rl->stats.nr_sites = rl->nr_sites;
	for (i = 0; i < rl->nr_sites; i++) {
		struct refleak_site *site = rl->site_array[i];
		int c;

		if (rl_site__refcounted(rl, site))
			rl->stats.nr_refcounted_sites++;
		site->refs_traced = rl_cache_traced(rl, site->cache);
		for (c = 0; c < REFLEAK_NR_CLASSES; c++) {
			struct refleak_group *g = site->groups[c];

			if (!g)
				continue;
			if (!rl_group__reported(g)) {
				rl->stats.nr_untracked += g->count;
				continue;
			}
			rl->stats.class_count[c] += g->count;
			rl->stats.tier_count[refleak_class__tier(c)] += g->count;
			rl->stats.nr_inferred += g->nr_inferred;
			rl->stats.nr_uncertain += g->nr_uncertain;
		}
	}
	return 0;
}

const struct refleak_stats *refleak__stats(struct refleak *rl)
{
	return &rl->stats;
}

struct refleak_group **refleak__groups(struct refleak *rl, enum refleak_class class,
				       size_t *nr)
{
	struct refleak_group **arr;
	size_t i, n = 0;

	*nr = 0;
	if (class >= REFLEAK_NR_CLASSES)
		return NULL;
	arr = calloc(rl->nr_sites + 1, sizeof(*arr));
	if (!arr)
		return NULL;
	for (i = 0; i < rl->nr_sites; i++) {
		struct refleak_group *g = rl->site_array[i]->groups[class];

		if (g && g->count && rl_group__reported(g))
			arr[n++] = g;
	}
	*nr = n;
	return arr;
}

static int stack_count_cmp(const void *a, const void *b)
{
	const struct refleak_stack_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct refleak_stack_count *refleak_group__stacks(struct refleak_group *g,
						  enum refleak_stack_kind kind,
						  size_t *nr)
{
	struct refleak_stack_count *arr;
	struct hashmap_entry *cur;
	size_t bkt, n = 0;

	*nr = 0;
	if (kind >= REFLEAK_NR_STACK_KINDS || !g->stacks[kind])
		return NULL;
	arr = calloc(hashmap__size(g->stacks[kind]) + 1, sizeof(*arr));
	if (!arr)
		return NULL;
	hashmap__for_each_entry(g->stacks[kind], cur, bkt) {
		arr[n].id = cur->key;
		arr[n].count = cur->value;
		n++;
	}
	qsort(arr, n, sizeof(*arr), stack_count_cmp);
	*nr = n;
	return arr;
}
