/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_REFLEAK_REFS_H
#define __PERF_REFLEAK_REFS_H
/*
 * Which reference was never put, for 'perf refleak': the gets and puts of
 * one counter of an object (ref_trace:ref_trace_ref, with the counter's
 * birth and final put) kept in a ledger, in event order, and paired at the
 * end.  Used by the engine (refleak.c) for objects of the caches a
 * recording traced with 'record --refs'; see refleak-refs.c for the rules.
 */
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct refleak_stacks;
struct refleak_site;
struct refleak_group;
struct refleak_unput;
struct refleak_ledger;

/*
 * The counter at @offset in the object was born holding @count references.
 * Every event has its @time and the @pid of its task; 0 when not known.
 */
int refleak_ledger__birth(struct refleak_ledger **lp, u32 offset, u32 stack, s32 count,
			  u64 time, int pid);
/*
 * A get (delta > 0) or a put that left references (delta < 0) on the
 * counter at @offset, which held @old references before.  The first event
 * of a counter not seen born creates its ledger, chained at *@lp to those
 * of the object's other counters (a few: the events of more return 1 and
 * are ignored).
 */
int refleak_ledger__ref(struct refleak_ledger **lp, u32 offset, u32 stack, s32 old, s32 delta,
			u64 time, int pid);
/* the counter at @offset reached zero: a put of everything it still held */
int refleak_ledger__final(struct refleak_ledger *l, u32 offset, u32 stack, u64 time, int pid);
void refleak_ledger__delete(struct refleak_ledger *l);
/* the counter still holds references, by its events */
bool refleak_ledger__held(const struct refleak_ledger *l);
/* the ledger of the object's next counter, or NULL */
const struct refleak_ledger *refleak_ledger__next(const struct refleak_ledger *l);

/* what the rules ask the engine of processes (see refleak.c) */
struct refleak_tasks {
	/* did process @pid exit after @after and by @by? */
	bool	(*exited)(void *arg, int pid, u64 after, u64 by);
	/* is the user process @pid, which took a reference at @time, still running? */
	bool	(*running)(void *arg, int pid, u64 time);
	void	*arg;
};

/*
 * A balanced object of @site: remember which get each of its puts paired
 * with, and how each get's references were put (in the call that took
 * them; by the process that took them, or after it exited).
 */
void refleak_refs__learn(struct refleak_stacks *st, struct refleak_site *site,
			 const struct refleak_ledger *l, const struct refleak_tasks *tasks);
/*
 * A balanced object of @site whose gets and puts were not recorded: its
 * counter's birth at @birth_stack by @birth_pid and its final put at
 * @put_stack by @put_pid teach how the birth's reference is put.
 */
void refleak_refs__learn_birth(struct refleak_stacks *st, struct refleak_site *site,
			       u32 birth_stack, int birth_pid, u64 birth_ns,
			       u32 put_stack, int put_pid, u64 put_ns,
			       const struct refleak_tasks *tasks);
/*
 * A balanced object of @site with several counters (@l, chained): remember
 * which of them reached zero first.
 */
void refleak_refs__learn_order(struct refleak_site *site, const struct refleak_ledger *l);
/* does the task @pid that took a reference at @time, @stack hold it no more? */
typedef bool (*refleak_holder_gone_fn)(void *arg, int pid, u64 time, u32 stack);

/*
 * A live object's counter @l (chained) got a put, by @before_ns, at a
 * stack that was the last put of at least @min_objects balanced objects
 * of @site and never put anything before their last, and still holds
 * references, each taken by a task @gone says holds it no more: see
 * refleak-refs.c.
 */
bool refleak_refs__past_last_put(struct refleak_stacks *st, const struct refleak_site *site,
				 const struct refleak_ledger *l, u32 min_objects, u64 before_ns,
				 refleak_holder_gone_fn gone, void *arg);
/*
 * A live object's counter @l (chained) holds, since at least @min_age_ns
 * before @end_ns and @factor times longer than any of theirs, a reference
 * that at least @min_objects balanced objects of @site took and always
 * put in the same call, in the process that took it: see refleak-refs.c.
 */
bool refleak_refs__call_ref_held(struct refleak_stacks *st, const struct refleak_site *site,
				 const struct refleak_ledger *l, u32 min_objects, u64 end_ns,
				 u64 min_age_ns, u32 factor);
/*
 * Every reference a live object's counters @l (chained) hold was taken
 * by a user process still running, at a get whose references at least
 * @min_objects balanced objects of @site always had put by the process
 * that took them or after it exited: see refleak-refs.c.
 */
bool refleak_refs__held_by_running(struct refleak_stacks *st, const struct refleak_site *site,
				   const struct refleak_ledger *l, u32 min_objects,
				   const struct refleak_tasks *tasks);
/*
 * The same for an object whose gets and puts were not recorded: its
 * counter's birth at @birth_stack by @pid at @time is all it holds.
 */
bool refleak_refs__birth_held_by_running(struct refleak_stacks *st,
					 const struct refleak_site *site, u32 birth_stack,
					 int pid, u64 time, u32 min_objects,
					 const struct refleak_tasks *tasks);
/*
 * The counter whose references an object of a finding kept, of its
 * ledgers @l: see refleak-refs.c.
 */
const struct refleak_ledger *refleak_refs__kept(const struct refleak_site *site,
						const struct refleak_ledger *l);
/*
 * An object of a finding: pair its gets and puts, and count what is left
 * (the references never put) in @g's list.  @uncertain: events may be
 * missing (lost events over its life), so the list cannot be sure.
 */
int refleak_refs__name(struct refleak_stacks *st, struct refleak_group *g,
		       const struct refleak_ledger *l, bool uncertain);

/*
 * References never put by a group's objects, most objects first; caller
 * frees the array (not its elements).  NULL: none named.
 */
struct refleak_unput **refleak_refs__unput(const struct refleak_group *g, size_t *nr);

void refleak_refs__site_exit(struct refleak_site *site);
void refleak_refs__group_exit(struct refleak_group *g);

#endif /* __PERF_REFLEAK_REFS_H */
