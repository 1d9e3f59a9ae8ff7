// SPDX-License-Identifier: GPL-2.0
/*
 * Call stacks and their frames for 'perf refleak', see refleak-stacks.h.
 *
 * Interning: a hashmap of the stacks, with a small direct-mapped cache in
 * front of it (most events repeat a recent stack), checked by comparing the
 * stack itself, so that a hit costs no hashing.
 *
 * Frames: what a frame is, by the name of its function, looked up once per
 * address through the caller's symbol callback and kept.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "hashmap.h"
#include "string2.h"
#include "refleak-stacks.h"

#define REFLEAK_MAX_STACK	256
/* slots of the direct-mapped cache in front of the stack hashmap */
#define REFLEAK_STACK_CACHE	256

struct rl_ips {
	u32	nr;
	u32	hash;
	u64	ips[];
};

/* what a frame is */
enum {
	RL_FRAME_SYMBOL		= 1 << 0,	/* a symbol covers it */
	RL_FRAME_NOISE		= 1 << 1,	/* machinery: tracing, allocator, counting */
	RL_FRAME_HELPER		= 1 << 2,	/* a counting helper: not the counter's user */
	RL_FRAME_IRQ_ENTRY	= 1 << 3,
	RL_FRAME_FORK		= 1 << 4,	/* fork's copy_process() */
	RL_FRAME_DISPATCH	= 1 << 5,	/* runs one call of many: a syscall, a work item */
};

struct rl_frame {
	u64		func;	/* start of its function, the address without symbol */
	const char	*name;	/* of its function; NULL: no symbol covers it */
	u8		what;	/* RL_FRAME_* */
};

struct refleak_stacks {
	struct hashmap		*map;		/* struct rl_ips -> id */
	struct rl_ips		**stacks;	/* by id - 1 */
	u32			nr;
	u32			alloc;
	struct rl_ips		*tmp;
	u32			cache[REFLEAK_STACK_CACHE];
	refleak_symbol_fn	symbol;
	void			*symbol_ctx;
	struct hashmap		*frames;	/* ip -> struct rl_frame */
};

static u32 ips_hash(const u64 *ips, u32 nr)
{
	u64 h = REFLEAK_FNV_BASIS ^ nr;
	u32 i;

	for (i = 0; i < nr; i++) {
		h = refleak_fnv1a(h, ips[i]);
		h ^= h >> 29;
	}
	return (u32)(h ^ (h >> 32));
}

static size_t ips_key_hash(long key, void *ctx __maybe_unused)
{
	return ((const struct rl_ips *)key)->hash;
}

static bool ips_key_equal(long a, long b, void *ctx __maybe_unused)
{
	const struct rl_ips *x = (const void *)a, *y = (const void *)b;

	return x->nr == y->nr && x->hash == y->hash &&
	       !memcmp(x->ips, y->ips, x->nr * sizeof(u64));
}

static size_t ip_hash(long key, void *ctx __maybe_unused)
{
	return (size_t)((u64)key * 0x9E3779B97F4A7C15ULL >> 16);
}

static bool ip_equal(long a, long b, void *ctx __maybe_unused)
{
	return a == b;
}

struct refleak_stacks *refleak_stacks__new(refleak_symbol_fn symbol, void *ctx)
{
	struct refleak_stacks *st = zalloc(sizeof(*st));

	if (!st)
		return NULL;
	st->symbol = symbol;
	st->symbol_ctx = ctx;
	st->map = hashmap__new(ips_key_hash, ips_key_equal, NULL);
	st->frames = hashmap__new(ip_hash, ip_equal, NULL);
	st->tmp = malloc(sizeof(*st->tmp) + REFLEAK_MAX_STACK * sizeof(u64));
	if (IS_ERR(st->map) || IS_ERR(st->frames) || !st->tmp) {
		if (IS_ERR(st->map))
			st->map = NULL;
		if (IS_ERR(st->frames))
			st->frames = NULL;
		refleak_stacks__delete(st);
		return NULL;
	}
	return st;
}

void refleak_stacks__delete(struct refleak_stacks *st)
{
	struct hashmap_entry *cur;
	size_t bkt;
	u32 i;

	if (!st)
		return;
	if (st->frames) {
		hashmap__for_each_entry(st->frames, cur, bkt)
			free((void *)cur->value);
		hashmap__free(st->frames);
	}
	hashmap__free(st->map);
	for (i = 0; i < st->nr; i++)
		free(st->stacks[i]);
	free(st->stacks);
	free(st->tmp);
	free(st);
}

/* a stack's slot in the cache: a few frames, not the whole stack */
static u32 stack_slot(const u64 *ips, u32 nr)
{
	u64 h = ips[0] + ips[nr >> 1] * 3 + ips[nr - 1] * 7 + nr;

	return (u32)((h * 0x9E3779B97F4A7C15ULL) >> 56) % REFLEAK_STACK_CACHE;
}

u32 refleak_stacks__intern(struct refleak_stacks *st, const u64 *ips, u32 nr)
{
	struct rl_ips *copy;
	u32 slot;
	long id;

	if (!nr || !ips)
		return 0;
	if (nr > REFLEAK_MAX_STACK)
		nr = REFLEAK_MAX_STACK;
	slot = stack_slot(ips, nr);
	id = st->cache[slot];
	if (id) {
		const struct rl_ips *c = st->stacks[id - 1];

		if (c->nr == nr && !memcmp(c->ips, ips, nr * sizeof(u64)))
			return id;
	}
	st->tmp->nr = nr;
	memcpy(st->tmp->ips, ips, nr * sizeof(u64));
	st->tmp->hash = ips_hash(st->tmp->ips, nr);
	if (hashmap__find(st->map, st->tmp, &id)) {
		st->cache[slot] = id;
		return id;
	}
	if (st->nr == st->alloc) {
		u32 n = st->alloc ? st->alloc * 2 : 256;
		struct rl_ips **arr = realloc(st->stacks, n * sizeof(*arr));

		if (!arr)
			return 0;
		st->stacks = arr;
		st->alloc = n;
	}
	copy = malloc(sizeof(*copy) + nr * sizeof(u64));
	if (!copy)
		return 0;
	memcpy(copy, st->tmp, sizeof(*copy) + nr * sizeof(u64));
	id = st->nr + 1;
	if (hashmap__add(st->map, copy, id)) {
		free(copy);
		return 0;
	}
	st->stacks[st->nr++] = copy;
	st->cache[slot] = id;
	return id;
}

const u64 *refleak_stacks__get(const struct refleak_stacks *st, u32 id, u32 *nr)
{
	if (!id || id > st->nr) {
		*nr = 0;
		return NULL;
	}
	*nr = st->stacks[id - 1]->nr;
	return st->stacks[id - 1]->ips;
}

u32 refleak_stacks__nr(const struct refleak_stacks *st)
{
	return st->nr;
}

/* ------------------------------------------------------------------ */
/* frames                                                              */

static bool rl_starts_with_any(const char *name, const char * const *prefixes, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (strstarts(name, prefixes[i]))
			return true;
	return false;
}

/*
 * The driver model's counting helpers: a struct device's reference is a
 * kref in its kobject, every get and put of it goes through them, and
 * what took or dropped it is their caller (class_find_device(), for a
 * lookup by class).
 */
static bool rl_device_helper(const char *name)
{
	static const char * const helpers[] = {
		"kobject_get", "kobject_put", "get_device", "put_device",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(helpers); i++)
		if (!strcmp(name, helpers[i]))
			return true;
	return false;
}

/*
 * The counting helpers and the tracing frames an event fires in: a
 * reference's user is the first frame outside them.
 */
static bool rl_helper_name(const char *name)
{
	static const char * const helpers[] = {
		"__ref_trace_", "ref_trace_", "refcount_", "__refcount_", "kref_", "percpu_ref_",
		"file_ref_", "__file_ref_", "rcuref_", "__rcuref_", "__do_trace_",
	};

	return rl_starts_with_any(name, helpers, ARRAY_SIZE(helpers)) || rl_device_helper(name);
}

/*
 * Frames a reader of a verdict does not need, and that the pairing of gets
 * with puts looks past: the tracing machinery that took the callchain, and
 * the allocator and counting helpers the event fired in (their out-of-line
 * copies at -Os).  The frame that matters, the one that allocated, put or
 * freed, comes first after them.
 */
static bool rl_noise_name(const char *name)
{
	static const char * const noise[] = {
		"trace_", "perf_trace_", "perf_tp_event", "perf_swevent_", "__perf_",
		"perf_trace_run_bpf_submit", "trace_event_raw_event_", "__traceiter_",
		"__do_trace_",
		"__ref_trace_", "ref_trace_", "refcount_", "__refcount_", "percpu_ref_put",
		"kref_", "file_ref_", "__file_ref_", "rcuref_", "__rcuref_",
		"kmem_cache_alloc", "kmem_cache_zalloc", "__kmalloc", "kmalloc", "_kmalloc",
		"_kzalloc", "kzalloc", "__kmem_cache", "kmem_cache_free", "kfree", "kvfree",
		"kvmalloc", "__kvmalloc", "slab_", "___slab_", "__slab_",
	};

	return rl_starts_with_any(name, noise, ARRAY_SIZE(noise)) || rl_device_helper(name);
}

/* where an interrupt entered: the softirq dispatcher, x86 interrupt vectors */
static bool rl_irq_entry_name(const char *name)
{
	return !strcmp(name, "handle_softirqs") || !strcmp(name, "__do_softirq") ||
	       strstarts(name, "asm_sysvec_") || !strcmp(name, "asm_common_interrupt");
}

/*
 * Where a task enters the call it makes, whatever call it is: the system
 * call entry and dispatch, a kernel thread's loop and a worker's.  Two
 * stacks that share only these are in different calls.
 */
static bool rl_dispatch_name(const char *name)
{
	static const char * const dispatch[] = {
		"entry_SYSCALL", "entry_SYSENTER", "do_syscall_64", "x64_sys_call",
		"ia32_sys_call", "do_int80_syscall_32", "__do_fast_syscall_32",
		"do_fast_syscall_32", "ret_from_fork", "kthread", "worker_thread",
		"process_one_work", "process_scheduled_works",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dispatch); i++)
		if (!strcmp(name, dispatch[i]) ||
		    (strstarts(name, dispatch[i]) && !strncmp(dispatch[i], "entry_", 6)))
			return true;
	return false;
}

/* copy_process(), or a copy of it the compiler made ("copy_process.isra.0") */
static bool rl_fork_name(const char *name)
{
	return strstarts(name, "copy_process") && (!name[12] || name[12] == '.');
}

static struct rl_frame rl_frame(struct refleak_stacks *st, u64 ip)
{
	struct rl_frame f = { .func = ip, }, *kept;
	const char *name;
	u64 start;

	if (!st->symbol)
		return f;
	/* the pairing asks for the same frames again and again: look each up once */
	if (st->frames && hashmap__find(st->frames, ip, &kept))
		return *kept;
	if (st->symbol(st->symbol_ctx, ip, &name, &start)) {
		f.func = start;
		f.name = name;
		f.what = RL_FRAME_SYMBOL | (rl_noise_name(name) ? RL_FRAME_NOISE : 0) |
			 (rl_helper_name(name) ? RL_FRAME_HELPER : 0) |
			 (rl_irq_entry_name(name) ? RL_FRAME_IRQ_ENTRY : 0) |
			 (rl_fork_name(name) ? RL_FRAME_FORK : 0) |
			 (rl_dispatch_name(name) ? RL_FRAME_DISPATCH : 0);
	}
	kept = st->frames ? malloc(sizeof(*kept)) : NULL;
	if (kept) {
		*kept = f;
		if (hashmap__add(st->frames, ip, kept))
			free(kept);
	}
	return f;
}

bool refleak_stacks__symbol(struct refleak_stacks *st, u64 ip, const char **name, u64 *start)
{
	struct rl_frame f = rl_frame(st, ip);

	*name = f.name;
	*start = f.func;
	return f.name;
}

u64 refleak_stacks__func(struct refleak_stacks *st, u64 ip)
{
	struct rl_frame f = rl_frame(st, ip);

	return f.what & RL_FRAME_NOISE ? 0 : f.func;
}

bool refleak_stacks__irq_entry(struct refleak_stacks *st, u64 ip)
{
	return rl_frame(st, ip).what & RL_FRAME_IRQ_ENTRY;
}

u32 refleak_stacks__irq_end(struct refleak_stacks *st, const u64 *ips, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (refleak_stacks__irq_entry(st, ips[i]))
			return i + 1;
	return nr;
}

bool refleak_stacks__dispatch(struct refleak_stacks *st, u64 ip)
{
	return rl_frame(st, ip).what & RL_FRAME_DISPATCH;
}

bool refleak_stacks__in_fork(struct refleak_stacks *st, u32 id)
{
	const u64 *ips;
	u32 nr, i;

	ips = refleak_stacks__get(st, id, &nr);
	for (i = 0; ips && i < nr; i++)
		if (rl_frame(st, ips[i]).what & RL_FRAME_FORK)
			return true;
	return false;
}

u32 refleak_stacks__first_frame(struct refleak_stacks *st, const u64 *ips, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (!(rl_frame(st, ips[i]).what & RL_FRAME_NOISE))
			return i;
	return 0;	/* all noise: show everything */
}

u64 refleak_stacks__user_frame(struct refleak_stacks *st, u32 id, u64 caller)
{
	u32 nr, i;
	const u64 *ips = refleak_stacks__get(st, id, &nr);

	for (i = 0; i < nr; i++) {
		u8 what = rl_frame(st, ips[i]).what;

		/* a frame without a symbol is not known to be the user */
		if ((what & RL_FRAME_SYMBOL) && !(what & RL_FRAME_HELPER))
			return ips[i];
	}
	return caller;
}
