// SPDX-License-Identifier: GPL-2.0
/*
 * Which reference was never put, see refleak-refs.h.
 *
 * A ledger holds the events of one counter of one object in the order they
 * came (an object with several counters has one ledger each, chained): its
 * birth (ref_trace_set, a get of 'count' references), its gets and
 * non-final puts (ref_trace_ref) and its final put (a put of all it still
 * held).  References are not named by the kernel, so a put must be paired
 * with one of the gets made before it and not yet paired.  The rules, in
 * order; the first that leaves a single candidate decides:
 *
 *   1. learned: the get stack this put stack paired with in the balanced
 *      objects of the same site (most often, if several);
 *   2. scope: the get made under the same call as the put.  Reading both
 *      stacks from the root, the frames they share end in one function F,
 *      and F is the function that took/dropped the reference or one of its
 *      RL_SCOPE_DEPTH callers on both sides: a reference taken for the
 *      duration of F (a lookup and its put in F).  The longest shared part
 *      wins;
 *   3. only one get stack has references left.
 *
 * When none decides, the put could belong to several gets: one is paired
 * (so that the counts stay right) and all of them become candidates.  What
 * is left at the end are the references never put.  If no put needed a
 * choice, they are certain.  Otherwise rule 4 compares what the rules left
 * open with the balanced objects of the site:
 *
 *   4. balanced shape: the gets not surely paired and the puts not decided
 *      of a balanced object (its shape, by rules 2 and 3 alone) balance
 *      each other.  If the open gets and puts of the leaked object contain
 *      such a shape, those puts are taken to pair with those gets (as
 *      rule 1 takes a pair seen in a balanced object), and the gets left
 *      over are the references never put: certain when no open put is left
 *      over either.  The shape that explains the most puts is used; two
 *      different shapes explaining as many leave the result undecided.
 *      A balanced object freed still holding references (net_device's
 *      dev_refcnt keeps its birth: free_netdev() frees it, no put reaches
 *      zero) has a shape too, whatever rules 1 to 3 decided: what it held
 *      at its free is no reference never put, and is taken out of a leaked
 *      object's references the same way.
 *
 * An error path that forgot a put leaves exactly this: the objects that
 * took the normal path show which puts balance the other gets.  When rule
 * 4 cannot decide either, the report lists every candidate with
 * its balance (its gets not surely paired: paired before the first choice
 * the rules could not make) and says it could not decide.  Balanced
 * objects (their counter reached zero, the object was freed) are paired
 * the same way, and the pairs decided by rules 2 and 3 are what rule 1
 * learns, so a put is paired in a leaked object as it was in the objects
 * that did not leak.  Rules 1 and 4 compare stacks without the machinery
 * and with their first frame as a function: a final put and a put that
 * leaves references differ only in the call the helper makes to report
 * them.  Every rule reads a stack taken in an interrupt (an RCU callback
 * dropping the reference of a freed holder) only down to the interrupt's
 * entry: below it is whatever the interrupt stopped, and gets whose stacks
 * differ only there are one get (a lookup on every packet received).
 *
 * The report names a get by its call and two callers (RL_NAME_DEPTH
 * frames): the stacks of a get that agree there are one entry, their
 * balances summed, and objects are grouped by the gets so named.
 *
 * An object with several counters keeps one ledger each; the references
 * named for an object of a finding are those of the counter that keeps the
 * others alive: of its counters still holding references, the one that
 * reached zero first in the site's balanced objects (a socket's sk_refcnt,
 * whose final put leads to sk_free() and so to the last put of its
 * sk_wmem_alloc), else the first still holding some (a passive count left
 * when the main count reached zero), else the first.
 *
 * The balanced objects also show who holds a get's references, for the
 * verdicts (refleak.c).  For each get stack (its key), their references
 * are counted by how they were put, whatever the rules above decided
 * (rl_learn_uses()):
 *
 *   - in the call that took them: a put by the same process, outside an
 *     interrupt, whose stack shares a call with the gets of that stack
 *     alone (read from the root, at any depth, below the entry that
 *     dispatches calls of every kind).  A reference a call takes for its
 *     own use; one held long after such a call returned is a put that
 *     call forgot (call_ref_held), whoever took it and whether or not
 *     they still run;
 *   - by their taker: by the same process outside an interrupt, or
 *     after the process exited (a task's own state, freed after its
 *     exit).  A live object holding only such references, not all put
 *     in their call, each taken by a user process still running, is
 *     held by it (a descriptor still open) and is no leak by its
 *     lifetime alone.
 *
 * Counts are checked: each ref_trace_ref carries the count before it, and
 * a count that differs from the ledger's means an event is missing (lost,
 * or an untraced path changed the counter), unless it and the event before
 * it fit the other way round: a task preempted between its atomic and its
 * event reports it after the next one (rl_ledger_before_last()).  References held before the
 * first event seen (the counter was born before the recording, or without
 * refcount_set()) are a get of stack 0.  Either makes the result uncertain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "hashmap.h"
#include "refleak.h"
#include "refleak-refs.h"
#include "refleak-stacks.h"

/* callers of the function that took/dropped a reference that may scope it */
#define RL_SCOPE_DEPTH		2
/* events kept per ledger; a longer history makes the result uncertain */
#define RL_LEDGER_MAX		65536
/* distinct get stacks a pairing follows; more make it uncertain */
#define RL_UNITS_MAX		64
/* puts a pairing could not decide, remembered for rule 4 */
#define RL_OPEN_MAX		64
/* frames that name a get in the report: its call and two callers */
#define RL_NAME_DEPTH		3
/* balanced shapes kept per site; more make rule 4 undecided there */
#define RL_SHAPES_MAX		64
/* counters of one object followed; the events of more are ignored */
#define RL_LEDGERS_MAX		4
/* a put stack of the site's last_puts that also put before the last */
#define RL_NOT_LAST		(-1L)

struct rl_ledger_entry {
	u32	stack;
	s32	delta;
	u64	time;		/* 0: not known */
	int	pid;		/* of the process, 0: not known */
};

struct refleak_ledger {
	u32			nr;
	u32			alloc;
	u32			offset;		/* of the counter followed */
	s32			count;		/* references held, by the events */
	bool			truncated;	/* more than RL_LEDGER_MAX events */
	bool			inconsistent;	/* a put was not seen */
	/* the last event's count before it, by the ledger and by itself */
	s32			before_last;
	s32			last_old;
	/* what the last event's count changed: enum rl_ledger_fix */
	u8			last_fix;
	bool			was_inconsistent;
	/* 1 + the object's counters that reached zero before this one; 0: never */
	u8			zero_order;
	struct rl_ledger_entry	*e;
	struct refleak_ledger	*next;		/* another counter of the object */
};

/* what a ledger's last event did to it, for rl_ledger_before_last() */
enum rl_ledger_fix {
	RL_FIX_NONE,
	RL_FIX_INCONSISTENT,	/* it made the ledger inconsistent */
	RL_FIX_UNSEEN,		/* a get of stack 0 was pushed before it */
};

/* references taken at one stack, in a pairing */
struct rl_unit {
	u32	stack;
	u64	key;		/* rl_stack_key() */
	u32	order;		/* first get of the unit, for stable output */
	s64	gets;
	s64	paired;
	s64	sure;		/* paired before any choice the rules could not make */
	bool	candidate;	/* could own a put that paired elsewhere */
};

struct rl_pairing {
	struct rl_unit	units[RL_UNITS_MAX];
	u32		nr;
	bool		ambiguous;
	bool		overflow;
	u64		excess;		/* puts with no get left to pair */
	u64		open[RL_OPEN_MAX];	/* stack keys of the puts not decided */
	u32		nr_open;
};

/* references at one stack key, in what a pairing left open */
struct rl_open_ref {
	u64	key;
	u32	n;
	bool	put;
};

/* what the rules left open in a balanced object, sorted by (put, key) */
struct rl_shape {
	u64			hash;
	u32			nr_puts;
	/* gets less puts: what a balanced object still held when it was freed */
	s64			held;
	u32			nr;
	struct rl_open_ref	e[];
};

struct rl_shapes {
	u32		nr;
	bool		overflow;
	struct rl_shape	*shape[RL_SHAPES_MAX];
};

/* how the balanced objects of a site put the references of one get stack */
struct rl_get_use {
	u32	gets;		/* references taken there */
	u32	in_call;	/* ... put in the call that took them */
	u32	by_taker;	/* puts by the process that took them, or after it exited */
	u32	not_by_taker;
	u64	max_call_ns;	/* the longest an in_call reference was held */
};

/* what the balanced objects of a site taught the pairing */
struct refleak_refs_site {
	/* (get, put) stack keys -> pairs seen (rule 1) */
	struct hashmap		*pairs;
	/* what the rules left open (rule 4) */
	struct rl_shapes	*shapes;
	/* one of those shapes held references at its object's free */
	bool			held_at_free;
	/* (counter offset, put stack key) -> balanced objects it was the last put of */
	struct hashmap		*last_puts;
	/* get stack key -> struct rl_get_use */
	struct hashmap		*uses;
	/* balanced objects with several counters: which reached zero first */
	struct {
		u32		offset;
		u64		nr;
	}			first_zero[RL_LEDGERS_MAX];
	u32			nr_first_zero;
};

/* a group's references never put: signature -> struct refleak_unput */
struct refleak_refs_group {
	struct hashmap		*unput;
};

/* a site's part, made at its first use */
static struct refleak_refs_site *rl_site_refs(struct refleak_site *site)
{
	if (!site->refs)
		site->refs = zalloc(sizeof(*site->refs));
	return site->refs;
}

static int refleak_ledger__push(struct refleak_ledger *l, u32 stack, s32 delta, u64 time,
				int pid)
{
	if (l->nr == RL_LEDGER_MAX) {
		l->truncated = true;
		return 0;
	}
	if (l->nr == l->alloc) {
		u32 n = l->alloc ? l->alloc * 2 : 8;
		struct rl_ledger_entry *e = realloc(l->e, n * sizeof(*e));

		if (!e)
			return -ENOMEM;
		l->e = e;
		l->alloc = n;
	}
	l->e[l->nr].stack = stack;
	l->e[l->nr].delta = delta;
	l->e[l->nr].time = time;
	l->e[l->nr].pid = pid;
	l->nr++;
	return 0;
}

static struct refleak_ledger *refleak_ledger__new(u32 offset)
{
	struct refleak_ledger *l = zalloc(sizeof(*l));

	if (l)
		l->offset = offset;
	return l;
}

/*
 * The ledger of the counter at @offset in the chain at @lp, created at the
 * counter's first event: 0, 1 when the object has RL_LEDGERS_MAX counters
 * followed already, or -ENOMEM.
 */
static int refleak_ledger__of(struct refleak_ledger **lp, u32 offset, struct refleak_ledger **found)
{
	int n = 0;

	for (; *lp; lp = &(*lp)->next, n++) {
		if ((*lp)->offset == offset) {
			*found = *lp;
			return 0;
		}
	}
	if (n == RL_LEDGERS_MAX)
		return 1;
	*lp = refleak_ledger__new(offset);
	*found = *lp;
	return *lp ? 0 : -ENOMEM;
}

int refleak_ledger__birth(struct refleak_ledger **lp, u32 offset, u32 stack, s32 count,
			  u64 time, int pid)
{
	struct refleak_ledger *l;
	int err = count > 0 ? refleak_ledger__of(lp, offset, &l) : 1;

	if (err)
		return err < 0 ? err : 0;
	l->count += count;
	l->last_fix = RL_FIX_NONE;
	return refleak_ledger__push(l, stack, count, time, pid);
}

/*
 * The event @old, @delta came before the ledger's last one, which was
 * reported first: a task is preempted between a put's atomic and its
 * event (the tracepoint runs preemptible, after the probes registered
 * before perf's), and another task's get or put on the counter is
 * reported in between.  Its count and the last one's say so: it found
 * the count the last one was given, and left the one the last one found.
 * Put it before the last one and undo what the last one's count made of
 * the ledger.  Only two adjacent events: what a preemption reorders.
 */
static bool rl_ledger_before_last(struct refleak_ledger *l, s32 old, s32 delta,
				  struct rl_ledger_entry *last)
{
	if (!l->nr || l->last_fix == RL_FIX_NONE || old != l->before_last ||
	    l->last_old != old + delta)
		return false;
	*last = l->e[--l->nr];
	if (l->last_fix == RL_FIX_UNSEEN)
		l->nr--;	/* the get of stack 0 pushed before it */
	else
		l->inconsistent = l->was_inconsistent;
	l->last_fix = RL_FIX_NONE;
	return true;
}

int refleak_ledger__ref(struct refleak_ledger **lp, u32 offset, u32 stack, s32 old, s32 delta,
			u64 time, int pid)
{
	struct rl_ledger_entry last;
	struct refleak_ledger *l;
	int err = refleak_ledger__of(lp, offset, &l);
	u8 fix = RL_FIX_NONE;

	if (err)
		return err;
	if (old != l->count && rl_ledger_before_last(l, old, delta, &last)) {
		/* in its place, before the last one; the count after both is the same */
		err = refleak_ledger__push(l, stack, delta, time, pid);
		return err ?: refleak_ledger__push(l, last.stack, last.delta, last.time, last.pid);
	}
	l->before_last = l->count;
	l->last_old = old;
	l->was_inconsistent = l->inconsistent;
	if (old > l->count) {
		/* references the events never showed taken: stack 0 */
		err = refleak_ledger__push(l, 0, old - l->count, 0, 0);
		if (err)
			return err;
		fix = RL_FIX_UNSEEN;
	} else if (old < l->count) {
		l->inconsistent = true;		/* a put was missed */
		fix = RL_FIX_INCONSISTENT;
	}
	l->count = old + delta;
	l->last_fix = fix;
	return refleak_ledger__push(l, stack, delta, time, pid);
}

int refleak_ledger__final(struct refleak_ledger *l, u32 offset, u32 stack, u64 time, int pid)
{
	const struct refleak_ledger *k;
	u8 order = 1;
	s32 held;

	for (k = l; k; k = k->next)
		if (k->zero_order && k->offset != offset)
			order++;
	while (l && l->offset != offset)
		l = l->next;
	if (!l)
		return 0;
	if (!l->zero_order)
		l->zero_order = order;
	held = l->count > 0 ? l->count : 1;
	l->count = 0;
	l->last_fix = RL_FIX_NONE;
	return refleak_ledger__push(l, stack, -held, time, pid);
}

void refleak_ledger__delete(struct refleak_ledger *l)
{
	while (l) {
		struct refleak_ledger *next = l->next;

		free(l->e);
		free(l);
		l = next;
	}
}

bool refleak_ledger__held(const struct refleak_ledger *l)
{
	return l && l->count > 0;
}

const struct refleak_ledger *refleak_ledger__next(const struct refleak_ledger *l)
{
	return l ? l->next : NULL;
}

/* ------------------------------------------------------------------ */
/* pairing                                                             */

static u64 rl_func(struct refleak_stacks *st, u64 ip)
{
	return refleak_stacks__func(st, ip);
}

/* was stack @id taken in an interrupt? Its process is whatever it stopped */
static bool rl_in_irq(struct refleak_stacks *st, u32 id)
{
	const u64 *ips;
	u32 nr;

	ips = id ? refleak_stacks__get(st, id, &nr) : NULL;
	return !ips || refleak_stacks__irq_end(st, ips, nr) < nr;
}

/* index of the first frame of a leaf-first stack outside the machinery */
static u32 rl_user_start(struct refleak_stacks *st, const u64 *ips, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (rl_func(st, ips[i]))
			return i;
	return nr;
}

/*
 * How closely the get at stack @g and the put at stack @p share a call:
 * the number of frames they share from the root, plus one when the next
 * frames are in the same function F.  0 when F is further than
 * RL_SCOPE_DEPTH callers from either the get or the put, or unknown.
 */
static u32 rl_scope(struct refleak_stacks *st, u32 g, u32 p)
{
	const u64 *gi, *pi;
	u32 gn, pn, gs, ps, ng, np, i = 0, score, below_g, below_p;

	if (!g || !p)
		return 0;
	gi = refleak_stacks__get(st, g, &gn);
	pi = refleak_stacks__get(st, p, &pn);
	if (!gi || !pi)
		return 0;
	gn = refleak_stacks__irq_end(st, gi, gn);
	pn = refleak_stacks__irq_end(st, pi, pn);
	gs = rl_user_start(st, gi, gn);
	ps = rl_user_start(st, pi, pn);
	ng = gn - gs;
	np = pn - ps;
	while (i < ng && i < np && gi[gn - 1 - i] == pi[pn - 1 - i])
		i++;
	score = i;
	if (i < ng && i < np && rl_func(st, gi[gn - 1 - i]) &&
	    rl_func(st, gi[gn - 1 - i]) == rl_func(st, pi[pn - 1 - i]))
		score++;
	if (!score)
		return 0;
	/* frames below F: F is frame score - 1 from the root */
	below_g = ng - score;
	below_p = np - score;
	if (below_g > RL_SCOPE_DEPTH || below_p > RL_SCOPE_DEPTH)
		return 0;
	return score;
}

/*
 * In the same call: read from the root, the stacks of the get at @g and
 * the put at @p share frames up to a function F, at any depth, and F is
 * not the entry that dispatches calls of every kind (a system call's, a
 * worker's).
 */
static bool rl_same_call(struct refleak_stacks *st, u32 g, u32 p)
{
	const u64 *gi, *pi;
	u32 gn, pn, gs, ps, i = 0;
	u64 f;

	gi = g ? refleak_stacks__get(st, g, &gn) : NULL;
	pi = p ? refleak_stacks__get(st, p, &pn) : NULL;
	if (!gi || !pi)
		return false;
	gn = refleak_stacks__irq_end(st, gi, gn);
	pn = refleak_stacks__irq_end(st, pi, pn);
	gs = rl_user_start(st, gi, gn);
	ps = rl_user_start(st, pi, pn);
	while (i < gn - gs && i < pn - ps && gi[gn - 1 - i] == pi[pn - 1 - i])
		i++;
	if (i < gn - gs && i < pn - ps && rl_func(st, gi[gn - 1 - i]) &&
	    rl_func(st, gi[gn - 1 - i]) == rl_func(st, pi[pn - 1 - i]))
		f = gi[gn - 1 - i];
	else if (i)
		f = gi[gn - i];
	else
		return false;
	return !refleak_stacks__dispatch(st, f);
}

/*
 * A hash of stack @id's first @depth frames outside the machinery, down to
 * an interrupt's entry; the first one by its function when @first_func.
 */
static u64 rl_frames_key(struct refleak_stacks *st, u32 id, u32 depth, bool first_func)
{
	u64 h = REFLEAK_FNV_BASIS;
	const u64 *ips;
	u32 nr, i, s;

	ips = id ? refleak_stacks__get(st, id, &nr) : NULL;
	if (!ips)
		return id;
	nr = refleak_stacks__irq_end(st, ips, nr);
	s = rl_user_start(st, ips, nr);
	for (i = s; i < nr && i - s < depth; i++)
		h = refleak_fnv1a(h, i == s && first_func ? rl_func(st, ips[i]) : ips[i]);
	return h ?: 1;
}

/* a stack as rules 1 and 4 compare it, see the top of this file */
static u64 rl_stack_key(struct refleak_stacks *st, u32 id)
{
	return rl_frames_key(st, id, UINT32_MAX, true);
}

/*
 * The unit of the gets at @stack: the gets whose stacks compare equal
 * (rl_stack_key()), so that gets made in interrupts that stopped
 * different code are one get, as the rules see them.
 */
static struct rl_unit *rl_unit(struct refleak_stacks *st,
			       struct rl_pairing *pr, u32 stack, u32 order)
{
	u64 key;
	u32 i;

	for (i = 0; i < pr->nr; i++)
		if (pr->units[i].stack == stack)
			return &pr->units[i];
	key = rl_stack_key(st, stack);
	for (i = 0; i < pr->nr; i++)
		if (pr->units[i].key == key)
			return &pr->units[i];
	if (pr->nr == RL_UNITS_MAX) {
		pr->overflow = true;
		return NULL;
	}
	pr->units[pr->nr] = (struct rl_unit){
		.stack = stack, .order = order, .key = key,
	};
	return &pr->units[pr->nr++];
}

static size_t site_pair_hash(long key, void *ctx __maybe_unused)
{
	return (size_t)((u64)key * 0x9e3779b97f4a7c15ULL >> 20);
}

static bool site_pair_equal(long a, long b, void *ctx __maybe_unused)
{
	return a == b;
}

static long rl_pair_key(u64 get, u64 put)
{
	return (long)(get ^ (put * 0x9e3779b97f4a7c15ULL));
}

static long rl_learned(const struct refleak_site *site, u64 get, u64 put)
{
	long n = 0;

	if (site && site->refs && site->refs->pairs)
		hashmap__find(site->refs->pairs, rl_pair_key(get, put), &n);
	return n;
}

/* the unit might still hold references: not all its gets were surely paired */
static bool rl_unit__might(const struct rl_unit *u)
{
	return u->gets > u->sure;
}

/*
 * Pair one put at @stack with a get in @pr; returns the unit paired, NULL
 * when no get is left.  The rules look at every get that might still hold
 * references (its gets not all surely paired), so that a choice they could
 * not make earlier does not decide this one.  *decided: the rules left one
 * get, which holds references; otherwise every candidate is marked and one
 * that holds references is paired, to keep the counts.
 */
static struct rl_unit *rl_pair_put(struct refleak_stacks *st,
				   const struct refleak_site *site, struct rl_pairing *pr,
				   u32 stack, bool *decided)
{
	struct rl_unit *best = NULL, *last = NULL, *held = NULL;
	u64 key = rl_stack_key(st, stack);
	long best_n = 0, n;
	u32 i, nr_might = 0, nr_best = 0, best_s = 0, s;

	*decided = false;
	for (i = 0; i < pr->nr; i++) {
		struct rl_unit *u = &pr->units[i];

		if (u->gets > u->paired)
			held = u;
		if (!rl_unit__might(u))
			continue;
		nr_might++;
		last = u;
		n = rl_learned(site, u->key, key);
		if (n > best_n) {
			best_n = n;
			best = u;
			nr_best = 1;
		} else if (n && n == best_n) {
			nr_best++;
		}
	}
	if (!held)
		return NULL;
	if (nr_best != 1) {
		best = nr_might == 1 ? last : NULL;
		nr_best = best ? 1 : 0;
	}
	if (!best) {
		for (i = 0; i < pr->nr; i++) {
			struct rl_unit *u = &pr->units[i];

			if (!rl_unit__might(u))
				continue;
			s = rl_scope(st, u->stack, stack);
			if (s > best_s) {
				best_s = s;
				best = u;
				nr_best = 1;
			} else if (s && s == best_s) {
				nr_best++;
			}
		}
	}
	if (nr_best == 1 && best->gets > best->paired) {
		*decided = true;
		return best;
	}

	/* several gets could own it: all of them (of the best scope) are candidates */
	pr->ambiguous = true;
	best = NULL;
	for (i = 0; i < pr->nr; i++) {
		struct rl_unit *u = &pr->units[i];

		if (!rl_unit__might(u))
			continue;
		if (!best_s || rl_scope(st, u->stack, stack) == best_s) {
			u->candidate = true;
			if (u->gets > u->paired)
				best = u;
		}
	}
	return best ?: held;
}

/* a map of a site's, made at its first use: NULL without memory */
static struct hashmap *rl_site_map(struct hashmap **map)
{
	if (!*map) {
		*map = hashmap__new(site_pair_hash, site_pair_equal, NULL);
		if (IS_ERR(*map))
			*map = NULL;
	}
	return *map;
}

/* @nr references taken at @get were put at @put */
static void rl_learn_pair(struct refleak_site *site, u64 get, u64 put, s64 nr)
{
	struct refleak_refs_site *refs = rl_site_refs(site);
	long n = 0;

	if (!refs || !rl_site_map(&refs->pairs))
		return;
	hashmap__find(refs->pairs, rl_pair_key(get, put), &n);
	hashmap__set(refs->pairs, rl_pair_key(get, put), n + nr, NULL, NULL);
}

/* the use of get stack @key at @site, made at its first use: NULL without memory */
static struct rl_get_use *rl_get_use(struct refleak_site *site, u64 key)
{
	struct refleak_refs_site *refs = rl_site_refs(site);
	struct rl_get_use *use;

	if (!refs || !rl_site_map(&refs->uses))
		return NULL;
	if (hashmap__find(refs->uses, (long)key, &use))
		return use;
	use = zalloc(sizeof(*use));
	if (use && hashmap__add(refs->uses, (long)key, use))
		zfree(&use);
	return use;
}

static const struct rl_get_use *rl_get_use_of(const struct refleak_site *site, u64 key)
{
	struct rl_get_use *use = NULL;

	if (site && site->refs && site->refs->uses)
		hashmap__find(site->refs->uses, (long)key, &use);
	return use;
}

/* references taken at one get stack, in rl_learn_uses() */
struct rl_open_get {
	u32	stack;
	u64	key;
	int	pid;		/* of the latest get */
	u64	time;
	s64	open;		/* not put yet, as far as rl_learn_uses() tells */
};

/* was a reference taken by @g, process @pid, put by the put @e by that process? */
static bool rl_by_taker(struct refleak_stacks *st, const struct rl_open_get *g,
			const struct rl_ledger_entry *e, const struct refleak_tasks *tasks)
{
	if (g->pid <= 0 || rl_in_irq(st, g->stack))
		return false;
	if (g->pid == e->pid && !rl_in_irq(st, e->stack))
		return true;
	return tasks->exited(tasks->arg, g->pid, g->time, e->time);
}

/*
 * How a balanced object's puts paid back its gets, by get stack: a put
 * that shares a call with the gets of one stack alone, taken by its
 * process, pays them back in that call; any other put, by its taker if
 * the process of every get it could pay back made it (or had exited).
 * Independent of the pairing's choices: a put it could not pair for sure
 * still tells this.
 */
static void rl_learn_uses(struct refleak_stacks *st, struct refleak_site *site,
			  const struct refleak_ledger *l, const struct refleak_tasks *tasks)
{
	struct rl_open_get g[RL_UNITS_MAX];
	u32 nr = 0, i, j;

	for (i = 0; i < l->nr; i++) {
		const struct rl_ledger_entry *e = &l->e[i];
		s64 n = e->delta < 0 ? -(s64)e->delta : 0;
		struct rl_get_use *use;
		bool all_taker = true;
		int call = -1;

		if (!e->stack)
			return;		/* references from before: nothing to tell */
		if (e->delta > 0) {
			for (j = 0; j < nr && g[j].stack != e->stack; j++)
				;
			if (j == nr) {
				if (nr == RL_UNITS_MAX)
					return;
				g[nr++] = (struct rl_open_get){
					.stack = e->stack, .key = rl_stack_key(st, e->stack),
				};
			}
			g[j].pid = e->pid;
			g[j].time = e->time;
			g[j].open += e->delta;
			use = rl_get_use(site, g[j].key);
			if (use)
				use->gets += e->delta;
			continue;
		}
		for (j = 0; j < nr; j++) {
			if (g[j].open <= 0)
				continue;
			if (g[j].pid > 0 && g[j].pid == e->pid && !rl_in_irq(st, g[j].stack) &&
			    !rl_in_irq(st, e->stack) && rl_same_call(st, g[j].stack, e->stack))
				call = call == -1 ? (int)j : -2;
			all_taker &= rl_by_taker(st, &g[j], e, tasks);
		}
		if (call >= 0) {
			s64 m = min(n, g[call].open);

			use = rl_get_use(site, g[call].key);
			if (use) {
				use->in_call += m;
				use->by_taker += m;
				if (e->time > g[call].time &&
				    e->time - g[call].time > use->max_call_ns)
					use->max_call_ns = e->time - g[call].time;
			}
			g[call].open -= m;
			n -= m;
		}
		/* the rest: any of the gets still open could be paid back */
		for (j = 0; j < nr && n > 0; j++) {
			if (g[j].open <= 0)
				continue;
			use = rl_get_use(site, g[j].key);
			if (use && all_taker)
				use->by_taker += n;
			else if (use && !rl_by_taker(st, &g[j], e, tasks))
				use->not_by_taker += n;
		}
		/* which of them it paid back is not known: the oldest, for what follows */
		for (j = 0; j < nr && n > 0; j++) {
			s64 m = min(n, g[j].open);

			if (m <= 0)
				continue;
			g[j].open -= m;
			n -= m;
		}
	}
}

/*
 * Run the ledger through the rules; @learn: record what was decided in
 * @site.  A NULL @site: rules 2 and 3 alone, as rule 4 compares.
 */
static void rl_pair_ledger(struct refleak_stacks *st, struct refleak_site *site,
			   const struct refleak_ledger *l, struct rl_pairing *pr, bool learn)
{
	u32 i;

	memset(pr, 0, sizeof(*pr));
	for (i = 0; i < l->nr; i++) {
		const struct rl_ledger_entry *e = &l->e[i];
		s64 k, n, j;

		if (e->delta > 0) {
			struct rl_unit *u = rl_unit(st, pr, e->stack, i);

			if (u)
				u->gets += e->delta;
			continue;
		}
		/*
		 * The references of one put, paired as many at a time as the
		 * unit chosen holds: the rules choose it again while it does
		 * (a bias such as the VMA lock's 2^30 is one put).
		 */
		for (k = -(s64)e->delta; k > 0; k -= n) {
			bool decided;
			struct rl_unit *u = rl_pair_put(st, site, pr, e->stack, &decided);

			if (!u) {
				pr->excess += k;
				break;
			}
			n = min(k, u->gets - u->paired);
			u->paired += n;
			if (!decided) {
				/* what rule 4 compares: kept when pairing for it */
				if (site)
					continue;
				for (j = 0; j < n && pr->nr_open + j < RL_OPEN_MAX; j++)
					pr->open[pr->nr_open + j] = rl_stack_key(st, e->stack);
				pr->overflow |= j < n;
				pr->nr_open = min_t(u64, (u64)pr->nr_open + n, UINT32_MAX);
				continue;
			}
			u->sure += n;
			if (learn && u->stack && e->stack)
				rl_learn_pair(site, u->key, rl_stack_key(st, e->stack), n);
		}
	}
}

static int rl_open_ref_cmp(const void *a, const void *b)
{
	const struct rl_open_ref *x = a, *y = b;

	if (x->put != y->put)
		return x->put ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * What @pr left open, in @out (room for RL_UNITS_MAX + RL_OPEN_MAX): the
 * gets not surely paired and the puts not decided, by stack key, sorted.
 */
static u32 rl_open_refs(const struct rl_pairing *pr, struct rl_open_ref *out)
{
	u32 i, n = 0, m = 0;

	for (i = 0; i < pr->nr; i++) {
		const struct rl_unit *u = &pr->units[i];

		if (u->gets > u->sure)
			out[n++] = (struct rl_open_ref){
				.key = u->key, .n = min(u->gets - u->sure, (s64)UINT32_MAX),
			};
	}
	for (i = 0; i < pr->nr_open && i < RL_OPEN_MAX; i++)
		out[n++] = (struct rl_open_ref){ .key = pr->open[i], .n = 1, .put = true, };
	qsort(out, n, sizeof(*out), rl_open_ref_cmp);
	for (i = 0; i < n; i++) {
		if (m && !rl_open_ref_cmp(&out[m - 1], &out[i]))
			out[m - 1].n += out[i].n;
		else
			out[m++] = out[i];
	}
	return m;
}

static u64 rl_open_refs_hash(const struct rl_open_ref *e, u32 nr)
{
	u64 h = REFLEAK_FNV_BASIS;
	u32 i;

	for (i = 0; i < nr; i++)
		h = refleak_fnv1a(h, e[i].key + e[i].n * 2 + e[i].put);
	return h;
}

static bool rl_shape__is(const struct rl_shape *sh, const struct rl_open_ref *e, u32 nr, u64 hash)
{
	u32 i;

	if (sh->hash != hash || sh->nr != nr)
		return false;
	for (i = 0; i < nr; i++)
		if (rl_open_ref_cmp(&sh->e[i], &e[i]) || sh->e[i].n != e[i].n)
			return false;
	return true;
}

/* rule 4: remember what the rules left open in a balanced object of @site */
static void rl_learn_shape(struct refleak_site *site, const struct rl_pairing *pr)
{
	struct rl_open_ref e[RL_UNITS_MAX + RL_OPEN_MAX];
	struct refleak_refs_site *refs = rl_site_refs(site);
	struct rl_shapes *shapes = refs ? refs->shapes : NULL;
	struct rl_shape *sh;
	u32 nr = rl_open_refs(pr, e), i, puts = 0;
	u64 hash = rl_open_refs_hash(e, nr);

	if (!refs)
		return;
	if (!shapes) {
		shapes = zalloc(sizeof(*shapes));
		if (!shapes)
			return;
		refs->shapes = shapes;
	}
	for (i = 0; i < shapes->nr; i++)
		if (rl_shape__is(shapes->shape[i], e, nr, hash))
			return;
	if (shapes->nr == RL_SHAPES_MAX) {
		shapes->overflow = true;
		return;
	}
	sh = malloc(sizeof(*sh) + nr * sizeof(sh->e[0]));
	if (!sh) {
		shapes->overflow = true;	/* a shape missing could change an answer */
		return;
	}
	sh->held = 0;
	for (i = 0; i < nr; i++) {
		puts += e[i].put ? e[i].n : 0;
		sh->held += e[i].put ? -(s64)e[i].n : e[i].n;
	}
	refs->held_at_free |= sh->held > 0;
	sh->hash = hash;
	sh->nr_puts = puts;
	sh->nr = nr;
	memcpy(sh->e, e, nr * sizeof(*e));
	shapes->shape[shapes->nr++] = sh;
}

static long rl_last_put_key(struct refleak_stacks *st, const struct refleak_ledger *l, u32 stack)
{
	return (long)(rl_stack_key(st, stack) ^ ((u64)l->offset * 0x9e3779b97f4a7c15ULL));
}

/*
 * The last put of a balanced object's counter (the final one, or the one
 * that left what it held at its free) counts for its put stack, as long as
 * that stack never put anything else in a balanced object: then it is the
 * put that ends the site's objects.
 */
static void rl_learn_last_put(struct refleak_stacks *st, struct refleak_site *site,
			      const struct refleak_ledger *l)
{
	struct refleak_refs_site *refs = rl_site_refs(site);
	bool seen_last = false;
	u32 i;

	if (!refs || !rl_site_map(&refs->last_puts))
		return;
	for (i = l->nr; i-- > 0;) {
		const struct rl_ledger_entry *e = &l->e[i];
		long key, n = 0;

		if (e->delta >= 0 || !e->stack)
			continue;
		key = rl_last_put_key(st, l, e->stack);
		hashmap__find(refs->last_puts, key, &n);
		if (seen_last)
			n = RL_NOT_LAST;
		else if (n != RL_NOT_LAST)
			n++;
		seen_last = true;
		hashmap__set(refs->last_puts, key, n, NULL, NULL);
	}
}

void refleak_refs__learn(struct refleak_stacks *st, struct refleak_site *site,
			 const struct refleak_ledger *l, const struct refleak_tasks *tasks)
{
	struct rl_pairing pr;

	if (!l || l->truncated || l->inconsistent)
		return;
	rl_learn_last_put(st, site, l);
	rl_learn_uses(st, site, l, tasks);
	rl_pair_ledger(st, site, l, &pr, true);
	/*
	 * A counter freed still holding references (net_device's dev_refcnt
	 * keeps its birth: free_netdev() frees, no put reaches zero) teaches
	 * what its site's objects hold at their free, as an ambiguous
	 * pairing teaches what its rules could not decide.
	 */
	if (!pr.ambiguous && !refleak_ledger__held(l))
		return;
	rl_pair_ledger(st, NULL, l, &pr, false);
	if ((pr.ambiguous || refleak_ledger__held(l)) && !pr.overflow)
		rl_learn_shape(site, &pr);
}

void refleak_refs__learn_order(struct refleak_site *site, const struct refleak_ledger *l)
{
	const struct refleak_ledger *k, *first = NULL;
	struct refleak_refs_site *rs;
	u32 i;

	if (!l || !l->next)
		return;
	for (k = l; k; k = k->next) {
		if (!k->zero_order)
			return;
		if (k->zero_order == 1)
			first = k;
	}
	rs = first ? rl_site_refs(site) : NULL;
	if (!rs)
		return;
	for (i = 0; i < rs->nr_first_zero; i++)
		if (rs->first_zero[i].offset == first->offset)
			break;
	if (i == rs->nr_first_zero) {
		if (i == RL_LEDGERS_MAX)
			return;
		rs->first_zero[i].offset = first->offset;
		rs->nr_first_zero++;
	}
	rs->first_zero[i].nr++;
}

const struct refleak_ledger *refleak_refs__kept(const struct refleak_site *site,
						const struct refleak_ledger *l)
{
	const struct refleak_refs_site *rs = site ? site->refs : NULL;
	const struct refleak_ledger *k, *best = NULL;
	u64 best_nr = 0;

	for (k = l; k; k = k->next) {
		u64 nr = 0;
		u32 i;

		if (!refleak_ledger__held(k))
			continue;
		for (i = 0; rs && i < rs->nr_first_zero; i++)
			if (rs->first_zero[i].offset == k->offset)
				nr = rs->first_zero[i].nr;
		if (!best || nr > best_nr) {
			best = k;
			best_nr = nr;
		}
	}
	return best ? best : l;
}

/*
 * @e minus @sh into @out, both sorted by (put, key): the number of entries
 * left, or -1 when @sh is not contained in @e.
 */
static int rl_shape__subtract(const struct rl_shape *sh, const struct rl_open_ref *e, u32 nr,
			      struct rl_open_ref *out)
{
	u32 i = 0, j = 0, m = 0;

	while (i < nr) {
		int c = j < sh->nr ? rl_open_ref_cmp(&e[i], &sh->e[j]) : -1;

		if (c > 0)
			return -1;	/* the shape has a reference @e has not */
		if (c < 0) {
			out[m++] = e[i++];
			continue;
		}
		if (sh->e[j].n > e[i].n)
			return -1;
		if (e[i].n > sh->e[j].n) {
			out[m] = e[i];
			out[m++].n -= sh->e[j].n;
		}
		i++;
		j++;
	}
	return j == sh->nr ? (int)m : -1;
}

/*
 * Rule 4 on @pr, the pairing by rules 2 and 3 of an object that kept
 * references: the open references left once the balanced shape that
 * explains the most puts is taken out, in @left; their number, or -1 when
 * no shape (or no single one) explains any.
 */
static int rl_balanced_shape(const struct refleak_site *site, const struct rl_pairing *pr,
			     struct rl_open_ref *left, s64 *held)
{
	struct rl_open_ref e[RL_UNITS_MAX + RL_OPEN_MAX], tmp[RL_UNITS_MAX + RL_OPEN_MAX];
	const struct rl_shapes *shapes = site->refs ? site->refs->shapes : NULL;
	u32 nr, i, best_puts = 0, nr_best = 0;
	int best_nr = -1, k;

	if (!shapes || shapes->overflow || pr->overflow)
		return -1;
	nr = rl_open_refs(pr, e);
	for (i = 0; i < shapes->nr; i++) {
		const struct rl_shape *sh = shapes->shape[i];

		if ((!sh->nr_puts && !sh->held) || sh->nr_puts < best_puts)
			continue;
		k = rl_shape__subtract(sh, e, nr, tmp);
		if (k < 0)
			continue;
		if (sh->nr_puts > best_puts) {
			best_puts = sh->nr_puts;
			nr_best = 0;
		}
		nr_best++;
		best_nr = k;
		*held = sh->held;
		memcpy(left, tmp, k * sizeof(*tmp));
	}
	return nr_best == 1 ? best_nr : -1;
}

static int unput_stack_cmp(const void *a, const void *b)
{
	const struct refleak_unput_stack *x = a, *y = b;

	if (x->balance != y->balance)
		return x->balance > y->balance ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* a get as the report names it: @id's first RL_NAME_DEPTH frames outside the machinery */
static u64 rl_name_key(struct refleak_stacks *st, u32 id)
{
	return rl_frames_key(st, id, RL_NAME_DEPTH, false);
}

/*
 * One entry per get as the report names it, the balances of its stacks
 * summed, the stack with the largest standing for them.  The stacks of
 * one get differ below its callers by how the code got there: a get in
 * the tick by what the interrupt stopped, and by the tick's own path
 * (sched_tick or hrtick).  Listed apart, they make one get look like
 * several, and the objects that leaked by it look different from each
 * other.
 */
static int rl_unput__merge(struct refleak_stacks *st, struct refleak_unput *u)
{
	u64 *keys = calloc(u->nr_stacks + 1, sizeof(*keys));
	u32 i, j, m = 0;

	if (!keys)
		return -ENOMEM;
	for (i = 0; i < u->nr_stacks; i++) {
		u64 key = rl_name_key(st, u->stacks[i].stack);

		for (j = 0; j < m && keys[j] != key; j++)
			;
		if (j < m) {
			u->stacks[j].balance += u->stacks[i].balance;
			u->stacks[j].merged = true;
			continue;
		}
		keys[m] = key;
		u->stacks[m++] = u->stacks[i];
	}
	u->nr_stacks = m;
	free(keys);
	qsort(u->stacks, u->nr_stacks, sizeof(u->stacks[0]), unput_stack_cmp);
	return 0;
}

struct rl_named_ref {
	u64	key;
	s64	balance;
};

static int rl_named_ref_cmp(const void *a, const void *b)
{
	const struct rl_named_ref *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->balance < y->balance ? -1 : x->balance > y->balance;
}

/*
 * "c|get:balance|..." of a merged result, its gets by rl_name_key(): the
 * objects with the same one are grouped, whichever of a get's stacks
 * stands for it.
 */
static char *rl_unput_signature(struct refleak_stacks *st, const struct refleak_unput *u)
{
	size_t size = 16 + u->nr_stacks * 48, len;
	struct rl_named_ref *r = calloc(u->nr_stacks + 1, sizeof(*r));
	char *sig = malloc(size);
	u32 i;

	if (!sig || !r) {
		free(sig);
		free(r);
		return NULL;
	}
	for (i = 0; i < u->nr_stacks; i++)
		r[i] = (struct rl_named_ref){
			.key = rl_name_key(st, u->stacks[i].stack),
			.balance = u->stacks[i].balance,
		};
	qsort(r, u->nr_stacks, sizeof(*r), rl_named_ref_cmp);
	len = snprintf(sig, size, "%c", u->certain ? 'c' : u->missing ? 'm' : 'u');
	for (i = 0; i < u->nr_stacks && len < size; i++)
		len += snprintf(sig + len, size - len, "|%llx:%lld",
				(unsigned long long)r[i].key, (long long)r[i].balance);
	free(r);
	return sig;
}

static size_t rl_str_hash(long key, void *ctx __maybe_unused)
{
	return str_hash((const char *)key);
}

static bool rl_str_equal(long a, long b, void *ctx __maybe_unused)
{
	return !strcmp((const char *)a, (const char *)b);
}

/* the references never put as rules 1-3 left them: @n stacks */
static struct refleak_unput *rl_unput__by_rules(const struct rl_pairing *pr, s64 refs, u32 n)
{
	struct refleak_unput *u = zalloc(sizeof(*u) + n * sizeof(u->stacks[0]));
	u32 i;

	if (!u)
		return NULL;
	u->nr_objects = 1;
	u->refs = refs;
	u->certain = !pr->ambiguous && !pr->overflow;
	for (i = 0; i < pr->nr; i++) {
		const struct rl_unit *un = &pr->units[i];

		if (un->gets > un->paired || (pr->ambiguous && un->candidate)) {
			/* not certain: how many of its references may be the ones never put */
			u->stacks[u->nr_stacks].stack = un->stack;
			u->stacks[u->nr_stacks].balance = un->gets -
				(pr->ambiguous ? un->sure : un->paired);
			u->nr_stacks++;
		}
		/* references from before the recording: nothing is certain */
		if (!un->stack && un->gets > un->paired)
			u->certain = false;
	}
	return u;
}

/*
 * The references never put by rule 4, NULL when it does not apply: the
 * gets left once a balanced shape of @site is taken out of the open ones,
 * certain when no put is left open.
 */
static struct refleak_unput *rl_unput__by_shape(struct refleak_stacks *st,
						const struct refleak_site *site,
						const struct refleak_ledger *l, s64 refs)
{
	struct rl_open_ref left[RL_UNITS_MAX + RL_OPEN_MAX];
	struct refleak_unput *u;
	struct rl_pairing pr;
	s64 gets = 0, puts = 0, held = 0;
	int nr, i;
	u32 k;

	rl_pair_ledger(st, NULL, l, &pr, false);
	nr = rl_balanced_shape(site, &pr, left, &held);
	if (nr <= 0)
		return NULL;
	for (i = 0; i < nr; i++) {
		if (left[i].put)
			puts += left[i].n;
		else
			gets += left[i].n;
	}
	if (gets - puts != refs - held || pr.excess)
		return NULL;	/* the counts do not add up: keep what rules 1-3 say */
	u = zalloc(sizeof(*u) + nr * sizeof(u->stacks[0]));
	if (!u)
		return NULL;
	u->nr_objects = 1;
	/* what the site's objects still hold when freed is not a reference never put */
	u->refs = refs - held;
	u->certain = !puts;
	/* references from before the recording, even if a shape explains them */
	for (k = 0; k < pr.nr; k++)
		if (!pr.units[k].stack && pr.units[k].gets > pr.units[k].sure)
			u->certain = false;
	for (i = 0; i < nr && !left[i].put; i++) {
		/* the first get at that key stands for it (same function, same callers) */
		for (k = 0; k < pr.nr; k++) {
			const struct rl_unit *un = &pr.units[k];

			if (un->key == left[i].key && un->gets > un->sure)
				break;
		}
		if (k == pr.nr)
			continue;
		u->stacks[u->nr_stacks].stack = pr.units[k].stack;
		u->stacks[u->nr_stacks].balance = left[i].n;
		u->nr_stacks++;
	}
	return u;
}

/* the objects of @have, grouped with @u: a get merged in one is in all */
static void rl_unput__merged_too(struct refleak_stacks *st, struct refleak_unput *have,
				 const struct refleak_unput *u)
{
	u32 i, j;

	for (i = 0; i < u->nr_stacks; i++) {
		u64 key = rl_name_key(st, u->stacks[i].stack);

		if (!u->stacks[i].merged)
			continue;
		for (j = 0; j < have->nr_stacks; j++)
			if (rl_name_key(st, have->stacks[j].stack) == key)
				have->stacks[j].merged = true;
	}
}

/*
 * The references never put of one object's counter @l, by the rules (one
 * stack each, not merged); NULL with *@err 0 when every reference was put.
 */
static struct refleak_unput *rl_unput_of(struct refleak_stacks *st,
					 const struct refleak_site *site,
					 const struct refleak_ledger *l, int *err)
{
	struct refleak_unput *u;
	struct rl_pairing pr;
	u32 i, n = 0;
	s64 refs = 0;

	*err = 0;
	rl_pair_ledger(st, (struct refleak_site *)site, l, &pr, false);
	for (i = 0; i < pr.nr; i++) {
		struct rl_unit *un = &pr.units[i];

		if (un->gets > un->paired)
			refs += un->gets - un->paired;
		if (un->gets > un->paired || (pr.ambiguous && un->candidate))
			n++;
	}
	if (refs <= 0)
		return NULL;	/* every reference was put: the counter was not the leak */

	u = pr.ambiguous || (site->refs && site->refs->held_at_free) ?
	    rl_unput__by_shape(st, site, l, refs) : NULL;
	if (!u)
		u = rl_unput__by_rules(&pr, refs, n);
	if (!u)
		*err = -ENOMEM;
	return u;
}

/* @k got, by @before_ns, the put that ended @min_objects of @site's balanced objects */
static bool rl_got_last_put(struct refleak_stacks *st, const struct refleak_site *site,
			    const struct refleak_ledger *k, u32 min_objects, u64 before_ns)
{
	u32 i;

	for (i = 0; i < k->nr; i++) {
		const struct rl_ledger_entry *e = &k->e[i];
		long n = 0;

		if (e->delta >= 0 || !e->stack || !e->time || e->time > before_ns)
			continue;
		hashmap__find(site->refs->last_puts, rl_last_put_key(st, k, e->stack), &n);
		if (n >= (long)min_objects)
			return true;
	}
	return false;
}

/*
 * The references @k holds, as its report names them (each a candidate
 * when not certain): was each taken by a task that holds it no more?  One
 * from before the recording has no known taker: no.
 */
static bool rl_takers_gone(struct refleak_stacks *st, const struct refleak_site *site,
			   const struct refleak_ledger *k, refleak_holder_gone_fn gone, void *arg)
{
	struct refleak_unput *u;
	bool all = true;
	u32 s, i;
	int err;

	u = rl_unput_of(st, site, k, &err);
	if (!u)
		return false;
	for (s = 0; s < u->nr_stacks && all; s++) {
		u32 stack = u->stacks[s].stack;

		if (!stack)
			all = false;
		for (i = 0; i < k->nr && all; i++) {
			const struct rl_ledger_entry *e = &k->e[i];

			if (e->delta > 0 && e->stack == stack && !gone(arg, e->pid, e->time, stack))
				all = false;
		}
	}
	free(u);
	return all;
}

bool refleak_refs__past_last_put(struct refleak_stacks *st, const struct refleak_site *site,
				 const struct refleak_ledger *l, u32 min_objects, u64 before_ns,
				 refleak_holder_gone_fn gone, void *arg)
{
	const struct refleak_ledger *k;

	if (!site->refs || !site->refs->last_puts)
		return false;
	for (k = l; k; k = k->next) {
		if (k->count <= 0 || k->truncated || k->inconsistent)
			continue;
		if (rl_got_last_put(st, site, k, min_objects, before_ns) &&
		    rl_takers_gone(st, site, k, gone, arg))
			return true;
	}
	return false;
}

void refleak_refs__learn_birth(struct refleak_stacks *st, struct refleak_site *site,
			       u32 birth_stack, int birth_pid, u64 birth_ns,
			       u32 put_stack, int put_pid, u64 put_ns,
			       const struct refleak_tasks *tasks)
{
	struct rl_ledger_entry e[2] = {
		{ .stack = birth_stack, .delta = 1, .time = birth_ns, .pid = birth_pid, },
		{ .stack = put_stack, .delta = -1, .time = put_ns, .pid = put_pid, },
	};
	struct refleak_ledger l = { .nr = 2, .e = e, };

	if (birth_ns && put_ns)
		rl_learn_uses(st, site, &l, tasks);
}

/* the latest get at @stack in @k, 0 if none */
static const struct rl_ledger_entry *rl_latest_get(const struct refleak_ledger *k, u32 stack)
{
	u32 i;

	for (i = k->nr; i-- > 0;)
		if (k->e[i].delta > 0 && k->e[i].stack == stack)
			return &k->e[i];
	return NULL;
}

/*
 * call_ref_held: of the references @k holds, as its report names them
 * with certainty, one was taken at a get that @min_objects balanced
 * objects put in the call that took it, and never elsewhere; its latest
 * get there is at least @min_age_ns old and @factor times older than
 * the longest they held one.
 */
static bool rl_call_ref_held(struct refleak_stacks *st, const struct refleak_site *site,
			     const struct refleak_ledger *k, u32 min_objects, u64 end_ns,
			     u64 min_age_ns, u32 factor)
{
	struct refleak_unput *u;
	bool held = false;
	u32 s;
	int err;

	u = rl_unput_of(st, site, k, &err);
	if (!u)
		return false;
	for (s = 0; u->certain && s < u->nr_stacks && !held; s++) {
		u32 stack = u->stacks[s].stack;
		const struct rl_get_use *use = rl_get_use_of(site, rl_stack_key(st, stack));
		const struct rl_ledger_entry *e = rl_latest_get(k, stack);
		u64 age;

		if (!stack || !e || !e->time || e->time > end_ns || !use ||
		    use->in_call < min_objects || use->in_call < use->gets)
			continue;
		age = max(min_age_ns, use->max_call_ns * factor);
		held = end_ns - e->time >= age;
	}
	free(u);
	return held;
}

bool refleak_refs__call_ref_held(struct refleak_stacks *st, const struct refleak_site *site,
				 const struct refleak_ledger *l, u32 min_objects, u64 end_ns,
				 u64 min_age_ns, u32 factor)
{
	const struct refleak_ledger *k;

	for (k = l; k; k = k->next) {
		if (k->count <= 0 || k->truncated || k->inconsistent)
			continue;
		if (rl_call_ref_held(st, site, k, min_objects, end_ns, min_age_ns, factor))
			return true;
	}
	return false;
}

/* references at @key are put by their taker in @min_objects balanced objects, always */
static bool rl_taker_puts(struct refleak_stacks *st, const struct refleak_site *site,
			  u32 stack, u32 min_objects)
{
	const struct rl_get_use *use = rl_get_use_of(site, rl_stack_key(st, stack));

	return stack && use && use->by_taker >= min_objects && !use->not_by_taker &&
	       use->in_call < use->gets;
}

bool refleak_refs__held_by_running(struct refleak_stacks *st, const struct refleak_site *site,
				   const struct refleak_ledger *l, u32 min_objects,
				   const struct refleak_tasks *tasks)
{
	const struct refleak_ledger *k;
	bool any = false;

	for (k = l; k; k = k->next) {
		struct refleak_unput *u;
		bool all = true;
		u32 s, i;
		int err;

		if (k->count <= 0)
			continue;
		if (k->truncated || k->inconsistent)
			return false;
		u = rl_unput_of(st, site, k, &err);
		if (!u)
			return false;
		for (s = 0; s < u->nr_stacks && all; s++) {
			u32 stack = u->stacks[s].stack;

			all = rl_taker_puts(st, site, stack, min_objects) && !rl_in_irq(st, stack);
			for (i = 0; i < k->nr && all; i++) {
				const struct rl_ledger_entry *e = &k->e[i];

				if (e->delta > 0 && e->stack == stack)
					all = tasks->running(tasks->arg, e->pid, e->time);
			}
		}
		free(u);
		if (!all)
			return false;
		any = true;
	}
	return any;
}

bool refleak_refs__birth_held_by_running(struct refleak_stacks *st,
					 const struct refleak_site *site, u32 birth_stack,
					 int pid, u64 time, u32 min_objects,
					 const struct refleak_tasks *tasks)
{
	return rl_taker_puts(st, site, birth_stack, min_objects) && !rl_in_irq(st, birth_stack) &&
	       tasks->running(tasks->arg, pid, time);
}

int refleak_refs__name(struct refleak_stacks *st, struct refleak_group *g,
		       const struct refleak_ledger *l, bool uncertain)
{
	struct refleak_unput *u, *have;
	char *sig;
	int err;

	if (!l)
		return 0;
	g->nr_named++;
	u = rl_unput_of(st, g->site, l, &err);
	if (!u)
		return err;
	if (uncertain || l->truncated || l->inconsistent) {
		u->certain = false;
		u->missing = true;
	}
	qsort(u->stacks, u->nr_stacks, sizeof(u->stacks[0]), unput_stack_cmp);
	if (rl_unput__merge(st, u)) {
		free(u);
		return -ENOMEM;
	}

	if (!g->refs)
		g->refs = zalloc(sizeof(*g->refs));
	if (g->refs && !g->refs->unput) {
		g->refs->unput = hashmap__new(rl_str_hash, rl_str_equal, NULL);
		if (IS_ERR(g->refs->unput))
			g->refs->unput = NULL;
	}
	if (!g->refs || !g->refs->unput) {
		free(u);
		return -ENOMEM;
	}
	sig = rl_unput_signature(st, u);
	if (!sig) {
		free(u);
		return -ENOMEM;
	}
	if (hashmap__find(g->refs->unput, sig, &have)) {
		have->nr_objects++;
		rl_unput__merged_too(st, have, u);
		free(sig);
		free(u);
		return 0;
	}
	if (hashmap__add(g->refs->unput, sig, u)) {
		free(sig);
		free(u);
		return -ENOMEM;
	}
	return 0;
}

static int unput_cmp(const void *a, const void *b)
{
	const struct refleak_unput *x = *(const struct refleak_unput * const *)a;
	const struct refleak_unput *y = *(const struct refleak_unput * const *)b;

	if (x->nr_objects != y->nr_objects)
		return x->nr_objects > y->nr_objects ? -1 : 1;
	if (x->certain != y->certain)
		return x->certain ? -1 : 1;
	return x->stacks[0].stack < y->stacks[0].stack ? -1 :
	       x->stacks[0].stack > y->stacks[0].stack;
}

struct refleak_unput **refleak_refs__unput(const struct refleak_group *g, size_t *nr)
{
	struct refleak_unput **arr;
	struct hashmap_entry *cur;
	size_t bkt, n = 0;

	*nr = 0;
	if (!g->refs || !g->refs->unput)
		return NULL;
	arr = calloc(hashmap__size(g->refs->unput) + 1, sizeof(*arr));
	if (!arr)
		return NULL;
	hashmap__for_each_entry(g->refs->unput, cur, bkt)
		arr[n++] = (struct refleak_unput *)cur->value;
	qsort(arr, n, sizeof(*arr), unput_cmp);
	*nr = n;
	return arr;
}

void refleak_refs__site_exit(struct refleak_site *site)
{
	u32 i;

	if (!site->refs)
		return;
	hashmap__free(site->refs->pairs);
	hashmap__free(site->refs->last_puts);
	if (site->refs->uses) {
		struct hashmap_entry *cur;
		size_t bkt;

		hashmap__for_each_entry(site->refs->uses, cur, bkt)
			free((void *)cur->value);
		hashmap__free(site->refs->uses);
	}
	for (i = 0; site->refs->shapes && i < site->refs->shapes->nr; i++)
		free(site->refs->shapes->shape[i]);
	free(site->refs->shapes);
	zfree(&site->refs);
}

void refleak_refs__group_exit(struct refleak_group *g)
{
	struct hashmap_entry *cur;
	size_t bkt;

	if (!g->refs)
		return;
	if (g->refs->unput) {
		hashmap__for_each_entry(g->refs->unput, cur, bkt) {
			free((void *)cur->key);
			free((void *)cur->value);
		}
		hashmap__free(g->refs->unput);
	}
	zfree(&g->refs);
}
