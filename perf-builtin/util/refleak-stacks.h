/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_REFLEAK_STACKS_H
#define __PERF_REFLEAK_STACKS_H
/*
 * Call stacks for 'perf refleak': each distinct stack interned once (an id
 * > 0; 0 means "no callchain"), and what its frames are to the report and
 * to the pairing of gets with puts, decided from the names of the functions
 * they are in.  Names come from the caller's symbol lookup; without one,
 * every address is a function of its own and no frame is special.
 */
#include <linux/types.h>
#include <stdbool.h>

struct refleak_stacks;

/* FNV-1a, a u64 at a time: the hash of the engine's stacks and keys */
#define REFLEAK_FNV_BASIS	0xcbf29ce484222325ULL

static inline u64 refleak_fnv1a(u64 h, u64 v)
{
	return (h ^ v) * 0x100000001b3ULL;
}

/* the function @ip is in: its name and start address; false if none is known */
typedef bool (*refleak_symbol_fn)(void *ctx, u64 ip, const char **name, u64 *start);

struct refleak_stacks *refleak_stacks__new(refleak_symbol_fn symbol, void *ctx);
void refleak_stacks__delete(struct refleak_stacks *st);

/* returns the stack's id, 0 for an empty stack or on allocation failure */
u32 refleak_stacks__intern(struct refleak_stacks *st, const u64 *ips, u32 nr);
/* the frames of stack @id, leaf first; NULL and *nr = 0 for an unknown id */
const u64 *refleak_stacks__get(const struct refleak_stacks *st, u32 id, u32 *nr);
u32 refleak_stacks__nr(const struct refleak_stacks *st);

/*
 * The function @ip is in, its name and start, through the symbol lookup
 * once for each address: false if no symbol covers it.
 */
bool refleak_stacks__symbol(struct refleak_stacks *st, u64 ip, const char **name, u64 *start);
/*
 * The function of frame @ip as the pairing compares frames: its start, 0
 * for a frame of the tracing machinery, the allocator or the counting
 * helpers (noise), @ip itself when no symbol covers it.
 */
u64 refleak_stacks__func(struct refleak_stacks *st, u64 ip);
/* the frame is where an interrupt entered: the softirq dispatcher, a vector */
bool refleak_stacks__irq_entry(struct refleak_stacks *st, u64 ip);
/*
 * The frames of a leaf-first stack down to an interrupt's entry, if it was
 * taken in one (@nr otherwise): below it is whatever the interrupt stopped.
 */
u32 refleak_stacks__irq_end(struct refleak_stacks *st, const u64 *ips, u32 nr);
/* stack @id runs through fork's copy_process(): what it took, it took for the child */
/* @ip is in a function that enters calls of every kind (a syscall's dispatch, a worker's loop) */
bool refleak_stacks__dispatch(struct refleak_stacks *st, u64 ip);
bool refleak_stacks__in_fork(struct refleak_stacks *st, u32 id);
/* index of the first frame of a leaf-first stack after the noise frames */
u32 refleak_stacks__first_frame(struct refleak_stacks *st, const u64 *ips, u32 nr);
/*
 * The first frame of stack @id outside the counting helpers, @caller if
 * none: an event's caller is in an out-of-line copy of a helper when the
 * compiler made one (-Os does, per file).
 */
u64 refleak_stacks__user_frame(struct refleak_stacks *st, u32 id, u64 caller);

#endif /* __PERF_REFLEAK_STACKS_H */
