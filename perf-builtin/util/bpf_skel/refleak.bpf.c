// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * perf refleak record -b: follow refcounted objects in the kernel.
 *
 * An object is followed from the birth of a counter inside it (its
 * allocation is found among its CPU's latest ones, or it is an object
 * followed already, found below the counter) to its free.  An object
 * freed with every counter at zero is balanced: it is summed into its
 * allocation site and forgotten, and kept a while in a graveyard, so that a
 * put after its free is still seen.  Objects that are not balanced (an
 * anomaly, a double put, a put after free) are moved to a map of reports;
 * objects still live at the end stay in theirs.  util/bpf_refleak.c reads
 * the maps at the end and writes them as the samples the plain recording
 * would have had: util/refleak.c judges both the same way.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <asm-generic/errno-base.h>

#include "refleak_data.h"

/* how far below a counter its object's start is looked for, in words */
#define RL_PROBE_WORDS		512
/* as util/refleak.c's REFLEAK_DEFAULT_GRAVEYARD_NS */
#define RL_GRAVEYARD_NS		(10ULL * 1000 * 1000 * 1000)

extern void bpf_preempt_disable(void) __ksym;
extern void bpf_preempt_enable(void) __ksym;
void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

struct kmem_cache___rl {
	unsigned int size;
	const char *name;
} __attribute__((preserve_access_index));

struct task_struct___rl {
	void *stack;
} __attribute__((preserve_access_index));

/* a type whose first word is a number: what a word of the stack is read as */
struct rb_node___rl {
	unsigned long __rb_parent_color;
} __attribute__((preserve_access_index));

/*
 * Every map a program updates is preallocated: an element allocated or
 * freed on demand may kmalloc() or kfree(), and so fire these programs
 * inside themselves.
 *
 * The stacks of the events of the objects followed (a final put, an
 * anomaly, the free of one reported), by a 64-bit hash of their frames: a
 * stack trace map's buckets are its ids, and two stacks in one bucket
 * fail, which thousands of stacks do.  The least recently used go when it
 * is full (stacks taken in interrupts are as many as what they
 * interrupt): a stack an object written at the end lost is counted then.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, u64);
	__type(value, struct rl_bpf_stack);
	__uint(max_entries, 32768);
} stacks SEC(".maps");

/*
 * The allocation stacks of the objects followed: not evicted, as the
 * stacks of their events are, however long an object lives (a leak does)
 * or however many events come after it.  Balanced objects' sums are by
 * it.  Far fewer than the events' stacks: sized as the sites.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct rl_bpf_stack);
	__uint(max_entries, 16384);
} alloc_stacks SEC(".maps");

/*
 * a stack being taken, per nesting level, and rl_ref()'s (RL_REF_LEVEL):
 * it runs in no other program's level, and never inside itself on a CPU
 */
#define RL_REF_LEVEL		RL_BPF_LEVELS

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct rl_bpf_stack);
	__uint(max_entries, RL_BPF_LEVELS + 1);
} stack_scratch SEC(".maps");

/* live followed objects, by start */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct rl_bpf_obj);
	__uint(max_entries, 65536);
} objects SEC(".maps");

/* counter address -> the start of its live object */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, u64);
	__uint(max_entries, 131072);
} counters SEC(".maps");

/* objects freed balanced, for a while: a later counter event is a use after free */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, u64);
	__type(value, struct rl_bpf_obj);
	__uint(max_entries, 4096);
} graveyard SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, u64);
	__type(value, u64);
	__uint(max_entries, 8192);
} grave_counters SEC(".maps");

struct rl_report_key {
	u64	addr;
	u64	nr;	/* one address is reported again, in one clock tick too */
};

u64 nr_reports;

/* objects that are not balanced, and anomalies on no object */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct rl_report_key);
	__type(value, struct rl_bpf_obj);
	__uint(max_entries, 16384);
} reports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct rl_bpf_site_key);
	__type(value, struct rl_bpf_site);
	__uint(max_entries, 16384);
} sites SEC(".maps");

/*
 * The gets and puts of the objects followed, by the object's id (its
 * address is another object's once it is freed) and their number in it.
 * An object's go when it is freed balanced and not kept as a sample;
 * those of an object reported or live at the end are written with it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct rl_ref_key);
	__type(value, struct rl_bpf_ev);
	__uint(max_entries, 262144);
} refs SEC(".maps");

/*
 * The latest RL_BPF_SAMPLES balanced objects of each allocation site and
 * stack and shape (which stacks got and put them: a bit of 64 each, a get
 * apart from a put), kept whole with their gets and puts: the report
 * learns from them which put pairs with which get, as from the balanced
 * objects of the plain recording.  An object is summed into its site when
 * a later one takes its slot, or written whole at the end: what is
 * written does not grow with time.  The next slot of each, in
 * sample_next.  Full: balanced objects are summed at once.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct rl_sample_key);
	__type(value, struct rl_bpf_obj);
	__uint(max_entries, 4096);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct rl_sample_key);	/* slot 0 */
	__type(value, u32);
	__uint(max_entries, 4096);
} sample_next SEC(".maps");

/* struct kmem_cache * -> its name */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, char[RL_BPF_CACHE_NAME]);
	__uint(max_entries, 1024);
} cache_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct rl_bpf_recent);
	__uint(max_entries, 1);
} recent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct rl_cpu);
	__uint(max_entries, 1);
} cpu_state SEC(".maps");

/*
 * Most allocations never have a counter born in them (62 % of those of
 * the balanced workload, at 129 of its 181 sites), and an allocation's
 * stack is the dearest part of following it.  A site is learned as plain
 * when RL_PLAIN_AFTER of its allocations left the CPU's latest ones
 * without a counter born in them, none ever had one: its allocations are
 * then taken without their stack.  A counter born in one all the same
 * marks the site refcounted for good, and that object has the stack of
 * its counter's birth (counted: nr_birth_stacks).  By a hash of the site
 * and cache, in an array: two sites in one slot only take stacks that
 * one of them did not need.
 */
#define RL_ALLOC_SITES		16384	/* a power of two */
#define RL_PLAIN_AFTER		64
#define RL_SITE_REFCOUNTED	0x80000000U	/* no BIT() in a BPF program */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, u32);
	__uint(max_entries, RL_ALLOC_SITES);
} alloc_sites SEC(".maps");

/* an object being built, per nesting level */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct rl_bpf_obj);
	__uint(max_entries, RL_BPF_LEVELS);
} scratch SEC(".maps");

/*
 * The events in flight, by the address of their arguments: the programs
 * of one event get the same, a nested event (an interrupt) or another
 * task's (tracepoints run preemptible) another.  A slot holds the address
 * of an event in flight, with RL_COUNTED if its first program ran while
 * enabled (counted it seen) and RL_TAKEN once a program took it.  The last
 * program of an event empties it: what is left is in flight, or was not
 * emptied (its last program nested in itself, or the task was preempted
 * in it and others ran the event meanwhile: several a second on a busy
 * machine).  Such a mark is the next event's with those arguments, if the
 * first program of that one finds it before a free slot.  If the first did
 * not run, the programs after it must not take the mark for their event's:
 * its tag tells them, or, when the event before had the same kind and
 * object (one slab object freed again and again from one call), the
 * middle program's pass, noted in the mark (@passed).  A mark that only
 * the last program missed has passed the middle one; one that two missed
 * can still be mistaken, when the next event with its tag is one that
 * two programs miss too.  Else, once a second old (mark_stale_ticks), a
 * mark is taken over by another event: one whose arguments never come
 * again would otherwise hold its slot for the rest of the recording.
 * An event in flight that long (its task preempted in it for a second or
 * more) loses its mark: taken again, it is counted as missed.
 * Marks are timed in jiffies: a load, where reading the clock is a helper
 * call on every event.
 * An array, its slots claimed by compare and exchange: no lock and no
 * element to allocate, on every allocation and free in the kernel.
 */
#define RL_IN_FLIGHT_SHIFT	12
#define RL_IN_FLIGHT		4096	/* 1 << RL_IN_FLIGHT_SHIFT */
#define RL_IN_FLIGHT_PROBES	8
#define RL_TAKEN		1ULL	/* arguments are 8-byte aligned */
#define RL_COUNTED		2ULL
#define RL_MARK_BITS		(RL_TAKEN | RL_COUNTED)
/* a second in jiffies: the running kernel's HZ, from the loader */
const volatile u64 mark_stale_ticks = 1000;

struct rl_in_flight_slot {
	u64	mark;	/* the address of the arguments, RL_MARK_BITS; 0: free */
	u64	tag;	/* the event's kind and its second argument: rl_tag() */
	u64	time;	/* when it was marked, in jiffies */
	u64	passed;	/* the program after the first that found it taken; 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct rl_in_flight_slot);
	__uint(max_entries, RL_IN_FLIGHT);
} in_flight SEC(".maps");

/*
 * The processes the report needs, by pid (perf record runs with
 * --no-tracking: the fork, exit and comm records of every task would be
 * most of the file, and grow with time).  A process forked in the
 * recording is kept while it runs; a process is kept after its exit while
 * it owns an object followed (its exit is the evidence of a leak), or a
 * get of one kept (whether the reference's taker still runs), or has a
 * child kept (a running descendant may have been handed what it
 * allocated before the fork).  Exited processes that own nothing and have
 * no child kept go, and so may their exited parents.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u32);
	__type(value, struct rl_bpf_proc);
	__uint(max_entries, 16384);
} procs SEC(".maps");

/* exited parents pruned after a process, at the most */
#define RL_PRUNE_DEPTH		16

/* set once every program is attached, cleared before they are detached */
int enabled;
u64 misses[RL_BPF_NR_MISSES];
u64 first_miss_ns;
u64 last_miss_ns;
u64 nr_unplaced_sets;	/* counters born in no object followed */
u64 nr_birth_stacks;	/* objects followed with their counter's birth stack */
/* for -v, what happened to the marks of events in flight */
u64 nr_marks_left_taken;	/* an event's last program did not run */
u64 nr_marks_left_untaken;	/* ... and no program took it */
u64 nr_marks_failed;		/* the last program found no free slot */
/* ... the marks in the slots it found: of this tick or the last, of 100 ticks, older */
u64 nr_marks_failed_ages[3];
u64 nr_marks_taken_over;	/* stale marks taken over by another event */
/* objects followed now, and at the most: what --map-nr-entries must hold */
u64 nr_objects_live;
u64 max_objects_live;
/* the last object id given: refs' keys */
u64 last_id;
/* gets and puts of objects followed; not kept: the refs map full, or an object's RL_BPF_REFS */
u64 nr_refs_seen;
u64 nr_refs_not_kept;
u64 nr_refs_map_full;
/* gets and puts in the refs map now, and at the most */
u64 nr_refs_kept;
u64 max_refs_kept;

/* ... by the function that set them, for 'perf refleak record -b -v' */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, u64);
	__uint(max_entries, 256);
} unplaced SEC(".maps");

static __always_inline void rl_miss(enum rl_bpf_miss what)
{
	u64 now = bpf_ktime_get_ns();

	if (what >= RL_BPF_NR_MISSES)
		return;
	__sync_fetch_and_add(&misses[what], 1);
	if (!first_miss_ns)
		first_miss_ns = now;
	last_miss_ns = now;
}

/*
 * The kernel runs no program inside itself (bpf_prog->active): an event in
 * a softirq or an interrupt that comes while a program runs on its CPU, or
 * in a task that preempted it, is not given to it, which would lose a free
 * (BCC memleak's phantom leaks).  So each event has three programs, run
 * in this order: rl_<tp>_0 marks the event in flight and takes it;
 * rl_<tp>_1 and rl_<tp>_2 take it only if no program did: when the ones
 * before them were running, interrupted or preempted.  The events the
 * first did not run for are the kernel's count of its recursion misses:
 * with those it counted seen, every event.  A handler runs with
 * preemption off: the per-CPU scratch maps, one per nesting level, and the
 * recent allocations are its own until it returns.  Deeper than
 * RL_BPF_LEVELS, an event is not taken; what no program took is the events
 * seen less the events taken, read at the end.
 */

/*
 * The address of an event's arguments as a number, the slots of in_flight
 * being hashes of such addresses.  The verifier allows no arithmetic on a
 * pointer to the context or on a trusted one but to add to it, and one
 * more: a program loaded with CAP_PERFMON may subtract two pointers.  Its
 * distance from a fixed address (a global's) is as unique as the address,
 * and costs a subtraction where reading the pointer as a number through
 * bpf_probe_read_kernel() costs a helper call, several times an event.
 * Both are 4-byte aligned at least: the low two bits stay clear for
 * RL_MARK_BITS.
 */
static __always_inline u64 rl_number(const void *ctx)
{
	return (u64)((long)ctx - (long)&enabled);
}

/*
 * What tells an event from one before it with its arguments at the same
 * address (the same depth of the same stack): its kind and its second
 * argument, the object or the counter.  A program after the first finding
 * a mark with its arguments but another tag knows that the first did not
 * run for its event (nested in itself) and that the mark was left by an
 * event before: it takes the event, where trusting the mark would lose it.
 */
static __always_inline u64 rl_tag(const unsigned long long *ctx, u32 ev)
{
	return ctx[1] ^ ((u64)ev << 56);
}

/*
 * The first slot to probe for the event with arguments at @key.  The
 * events in flight at once are mostly on a few stacks (a CPU's interrupt
 * stack, the tasks preempted in a program), a few words apart: as an
 * index, their address's own bits would put them in neighbouring slots,
 * runs that linear probing then finds full.  A multiplicative hash
 * scatters them.
 */
static __always_inline u32 rl_in_flight_hash(u64 key)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> (64 - RL_IN_FLIGHT_SHIFT);
}

/* the in-flight slot of the event with arguments at @key; NULL: none */
static __always_inline struct rl_in_flight_slot *rl_in_flight(u64 key)
{
	u32 h = rl_in_flight_hash(key), i, idx;
	struct rl_in_flight_slot *slot;

	for (i = 0; i < RL_IN_FLIGHT_PROBES; i++) {
		idx = (h + i) & (RL_IN_FLIGHT - 1);
		slot = bpf_map_lookup_elem(&in_flight, &idx);
		if (slot && (slot->mark & ~RL_MARK_BITS) == key)
			return slot;
	}
	return NULL;
}

/*
 * The slot for the event with arguments at @key, its mark set to @val: a
 * mark left there by an event before with those arguments, or a free or
 * stale slot, whichever comes first in the probe order (the programs after
 * this one find the first); NULL: none.  One pass: most events find their
 * first slot free.
 */
static __always_inline struct rl_in_flight_slot *rl_mark(u64 key, u64 val, u64 tag)
{
	u32 h = rl_in_flight_hash(key), i, idx;
	struct rl_in_flight_slot *slot;
	u64 now = bpf_jiffies64(), old;

	for (i = 0; i < RL_IN_FLIGHT_PROBES; i++) {
		idx = (h + i) & (RL_IN_FLIGHT - 1);
		slot = bpf_map_lookup_elem(&in_flight, &idx);
		if (!slot)
			continue;
		old = slot->mark;
		if (old && (old & ~RL_MARK_BITS) == key) {
			/* no other event has these arguments: no race for it */
			if (old & RL_TAKEN)
				__sync_fetch_and_add(&nr_marks_left_taken, 1);
			else if (old & RL_COUNTED)
				__sync_fetch_and_add(&nr_marks_left_untaken, 1);
			slot->time = now;
			slot->tag = tag;
			slot->passed = 0;
			slot->mark = val;
			return slot;
		}
		if (old && slot->time + mark_stale_ticks > now)
			continue;
		if (__sync_val_compare_and_swap(&slot->mark, old, val) == old) {
			slot->time = now;
			slot->tag = tag;
			slot->passed = 0;
			if (old)
				__sync_fetch_and_add(&nr_marks_taken_over, 1);
			return slot;
		}
	}
	return NULL;
}

/* for -v: an event found no free slot; how old were the marks in them? */
static __always_inline void rl_mark_failed(u64 key)
{
	u32 h = rl_in_flight_hash(key), i, idx;
	struct rl_in_flight_slot *slot;
	u64 now = bpf_jiffies64(), age;

	__sync_fetch_and_add(&nr_marks_failed, 1);
	for (i = 0; i < RL_IN_FLIGHT_PROBES; i++) {
		idx = (h + i) & (RL_IN_FLIGHT - 1);
		slot = bpf_map_lookup_elem(&in_flight, &idx);
		if (!slot || !slot->mark)
			continue;
		age = now - slot->time;
		if (age <= 1)
			__sync_fetch_and_add(&nr_marks_failed_ages[0], 1);
		else if (age <= 100)
			__sync_fetch_and_add(&nr_marks_failed_ages[1], 1);
		else
			__sync_fetch_and_add(&nr_marks_failed_ages[2], 1);
	}
}

/*
 * rl_take(): for the event with arguments at @key, in @slot if marked in
 * flight, the nesting level to handle the event at, until rl_done();
 * or -1: not enabled, another program took it, or it cannot be marked
 * taken (the programs after this one would take it again: an event taken
 * twice is a put counted twice, a double put that never was).
 */
static __always_inline int rl_take(u64 key, u64 tag, struct rl_in_flight_slot *slot, u32 ev,
				   u32 k)
{
	u32 zero = 0;
	struct rl_cpu *c = bpf_map_lookup_elem(&cpu_state, &zero);

	if (!c || ev >= RL_BPF_NR_EV_KINDS)
		return -1;
	if (slot) {
		/*
		 * Counted seen while enabled: taken, even when no longer;
		 * seen while not enabled: neither counted nor taken, even
		 * if enabled since.
		 */
		if (!(slot->mark & RL_COUNTED) || (k && (slot->mark & RL_TAKEN)))
			return -1;
		slot->mark = key | RL_COUNTED | RL_TAKEN;
	} else if (!enabled) {
		return -1;
	} else if (k == 0 || !rl_mark(key, key | RL_COUNTED | RL_TAKEN, tag)) {
		/*
		 * Not marked by the first program (nested in itself, or no
		 * free slot): taken only if marked taken now, for the
		 * programs after this one.  No free slot for the last: lost.
		 */
		if (k == RL_BPF_LEVELS - 1)
			rl_mark_failed(key);
		return -1;
	}
	if (c->depth >= RL_BPF_LEVELS)
		return -1;
	__sync_fetch_and_add(&c->handled[ev], 1);
	if (k < RL_BPF_LEVELS)
		c->taken_by[k]++;
	return c->depth++;
}

/* the last program of an event: it is not in flight any more */
static __always_inline void rl_landed(u64 key)
{
	struct rl_in_flight_slot *slot = rl_in_flight(key);

	if (slot)
		slot->mark = 0;
}

static __always_inline void rl_done(void)
{
	u32 zero = 0;
	struct rl_cpu *c = bpf_map_lookup_elem(&cpu_state, &zero);

	if (c)
		c->depth--;
}

/*
 * The first program of an event: marks it in flight, and counted seen if
 * enabled; marked all the same when not, so that an event begun before
 * the programs were enabled is not taken after (nor one begun after they
 * were disabled).  The slot of its mark; NULL: not enabled, or no slot
 * (a program after it marks it, or it is not taken).
 */
static __always_inline struct rl_in_flight_slot *rl_seen(u64 key, u64 tag, u32 ev)
{
	u32 zero = 0;
	struct rl_cpu *c = bpf_map_lookup_elem(&cpu_state, &zero);
	struct rl_in_flight_slot *slot;
	int on = enabled;

	if (!c || ev >= RL_BPF_NR_EV_KINDS)
		return NULL;
	slot = rl_mark(key, on ? key | RL_COUNTED : key, tag);
	if (!on)
		return NULL;
	__sync_fetch_and_add(&c->seen[ev], 1);
	return slot;
}

/*
 * Program @k of @event: @call runs with @level, if it takes the event.  The
 * first marks it and takes it, unless nested in itself.  A program after
 * the first finds the event taken by it nearly always: it returns at once,
 * and the last one lands it.
 */
#define RL_PROG(tp, name, event, k, call, args...)				\
SEC("tp_btf/" #tp)								\
int BPF_PROG(name, args)							\
{										\
	u64 key = rl_number(ctx), tag = rl_tag(ctx, event);			\
	struct rl_in_flight_slot *slot;						\
	int level, nth = (k);							\
										\
	if (nth) {								\
		slot = rl_in_flight(key);					\
		if (slot && slot->tag != tag)					\
			slot = NULL;						\
		if (slot && (slot->mark & RL_TAKEN) &&				\
		    nth < RL_BPF_LEVELS - 1 && slot->passed >= nth)		\
			slot = NULL;	/* an event's before it: passed */	\
		if (slot && (slot->mark & RL_TAKEN)) {				\
			if (nth == RL_BPF_LEVELS - 1)				\
				slot->mark = 0;					\
			else							\
				slot->passed = nth;				\
			return 0;						\
		}								\
	} else {								\
		slot = rl_seen(key, tag, event);				\
		if (!slot)							\
			return 0;						\
	}									\
	bpf_preempt_disable();							\
	level = rl_take(key, tag, slot, event, nth);				\
	if (level >= 0) {							\
		call;								\
		rl_done();							\
	}									\
	if (nth == RL_BPF_LEVELS - 1)						\
		rl_landed(key);							\
	bpf_preempt_enable();							\
	return 0;								\
}

/* the programs of an event, in the order they are attached and run */
#define RL_PROGS(tp, event, call, args...)					\
	RL_PROG(tp, rl_##tp##_0, event, 0, call, args)				\
	RL_PROG(tp, rl_##tp##_1, event, 1, call, args)				\
	RL_PROG(tp, rl_##tp##_2, event, 2, call, args)

/* the process @pid, made for one from before the recording; NULL: map full */
static __always_inline struct rl_bpf_proc *rl_proc(u32 pid)
{
	struct rl_bpf_proc *p = bpf_map_lookup_elem(&procs, &pid), none = {};
	long err;

	if (p)
		return p;
	err = bpf_map_update_elem(&procs, &pid, &none, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		rl_miss(RL_BPF_MISS_PROCS);
		return NULL;
	}
	return bpf_map_lookup_elem(&procs, &pid);
}

/*
 * @pid, if it exited, owns no object followed and has no child kept, goes;
 * then its parent is one child short, and may go too.
 */
static __always_inline void rl_proc_prune(u32 pid)
{
	struct rl_bpf_proc *p;
	u64 forked;
	u32 i, ppid;

	for (i = 0; i < RL_PRUNE_DEPTH; i++) {
		p = bpf_map_lookup_elem(&procs, &pid);
		if (!p || !p->exit_ns || p->nr_objects > 0 || p->nr_children > 0)
			return;
		forked = p->fork_ns;
		ppid = p->ppid;
		/* another CPU pruning it too: one of them goes on */
		if (bpf_map_delete_elem(&procs, &pid))
			return;
		/* only a process forked in the recording counts as its parent's child */
		if (!forked)
			return;
		p = bpf_map_lookup_elem(&procs, &ppid);
		if (!p)
			return;
		__sync_fetch_and_sub(&p->nr_children, 1);
		pid = ppid;
	}
}

/*
 * @pid allocated an object followed now, or took a reference of one that
 * is kept (@delta 1); or one of those is no longer (-1)
 */
static __always_inline void rl_own(u32 pid, s64 delta)
{
	struct rl_bpf_proc *p;

	if (!pid)
		return;
	p = delta > 0 ? rl_proc(pid) : bpf_map_lookup_elem(&procs, &pid);
	if (!p)
		return;
	__sync_fetch_and_add(&p->nr_objects, delta);
	if (delta < 0)
		rl_proc_prune(pid);
}

/* what is learned of an allocation site: plain allocations seen, refcounted */
static __always_inline u32 *rl_alloc_site(u64 call_site, u64 cache)
{
	u64 h = (call_site ^ (cache * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
	u32 idx = (h >> 40) & (RL_ALLOC_SITES - 1);

	return bpf_map_lookup_elem(&alloc_sites, &idx);
}

/*
 * The loops over a stack's frames are global functions: the verifier
 * checks a global function once, for any caller, where it walks a loop
 * inlined anew for each path that reaches it (each way of a known stack's
 * set, each save): inlined, they made most of the instructions it checked,
 * and loading the programs took most of a minute in a small guest.
 */
__noinline u64 rl_stack_key(const struct rl_bpf_stack *st)
{
	/* FNV-1a, mixed as the engine's stack hash is (refleak-stacks.c) */
	u64 h = 0xcbf29ce484222325ULL;
	u32 i;

	if (!st)
		return 1;
	for (i = 0; i < RL_BPF_MAX_STACK && i < st->nr; i++) {
		h = (h ^ st->ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h ?: 1;
}

/*
 * The key of a stack, kept in @map (stacks or alloc_stacks); 0: none,
 * counted missed unless @quiet (it is tried again later)
 */
static __always_inline u64 rl_stack_save(void *map, const struct rl_bpf_stack *st, bool quiet)
{
	u64 key;
	long err;

	if (!st->nr)
		return 0;
	key = rl_stack_key(st);
	if (bpf_map_lookup_elem(map, &key))
		return key;
	err = bpf_map_update_elem(map, &key, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		if (!quiet)
			rl_miss(RL_BPF_MISS_STACKS);
		return 0;
	}
	return key;
}

static __always_inline void rl_stack_take(void *ctx, struct rl_bpf_stack *st)
{
	u32 zero = 0;
	struct rl_cpu *c = bpf_map_lookup_elem(&cpu_state, &zero);
	long n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), 0);

	st->nr = n > 0 ? n / sizeof(u64) : 0;
	if (n <= 0)
		rl_miss(RL_BPF_MISS_STACKS);
	if (c)
		c->stacks_walked++;
}

/*
 * Known stacks.  Unwinding a stack is most of what following an object
 * costs (the ORC unwinder looks each frame up in its tables), and a site
 * is nearly always reached by the few same paths.  A stack, once
 * unwound, is known by where its return addresses lie above the event's
 * arguments: the next event of that site with its arguments at the same
 * depth of a task's stack whose words there hold the same return
 * addresses has the same stack, which is then not unwound again.  The
 * unwinder finds each frame from the one below it, its return address
 * and the size of its function's frame: the same return addresses at the
 * same places, from the same place, are the same frames.  (A frame whose
 * size is not its function's, alloca() or a stack realigned, no kernel C
 * function has.)  The frames below the arguments are those of the
 * program and of bpf_trace_run*(): the report does not show them.
 *
 * Only on a task's own stack, where the stack below an event is its
 * task's: in an interrupt, below it is whatever the interrupt came in.
 * Per CPU: a handler runs with preemption off, and none runs in a task
 * inside another one on its CPU, so a known stack is not changed while it
 * is compared.  By a hash of the site and depth, in sets of RL_KNOWN_WAYS:
 * a site reached at one depth by several paths (in a helper such as
 * __alloc_skb(), called from many places) keeps four, and a stack
 * learned goes where none is, else over another site's, else over this
 * site's in turn.  672 bytes a stack, 2.6 MiB a CPU.
 */
#define RL_KNOWN		4096	/* per CPU, a power of two */
#define RL_KNOWN_BELOW		4	/* frames below the arguments, at most */
#define RL_KNOWN_WAYS		4	/* stacks a site and depth may have */

struct rl_known_stack {
	u64	key;		/* its site and depth, rl_known_at(); 0: none */
	u64	saved;		/* its key in stacks or alloc_stacks */
	u32	first;		/* ips[first..] lie above the arguments, at slot[] */
	__u16	slot[RL_BPF_MAX_STACK];	/* in words above the arguments */
	struct rl_bpf_stack st;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct rl_known_stack);
	__uint(max_entries, RL_KNOWN);
} known_stacks SEC(".maps");

/*
 * THREAD_SIZE, the size of a task's stack: a macro, in no BTF.  On x86_64
 * an interrupt stack is as large (IRQ_STACK_ORDER is THREAD_SIZE_ORDER,
 * 32 KiB with KASAN, else 16 KiB), and its type is: its size is read from
 * the running kernel's BTF when the programs load.  None: no known stacks.
 */
struct irq_stack___rl {
	char	stack[1];
} __attribute__((preserve_access_index));

static __always_inline u64 rl_task_stack_size(void)
{
	if (!bpf_core_type_exists(struct irq_stack___rl))
		return 0;
	return bpf_core_type_size(struct irq_stack___rl);
}

/* where the stack of an event is: its arguments, and its task's stack */
struct rl_stack_at {
	u64	args;
	u64	top;
	u64	key;
	u32	idx;	/* the first of its set */
	u32	way;	/* of the set: the stack known, or where to learn it */
};

u64 enabled_at;	/* &enabled, as a number: see rl_number() */

/*
 * A word of the kernel's memory: a load, which the kernel's fault handler
 * makes 0 where nothing is mapped, where bpf_probe_read_kernel() is a
 * helper call
 */
static __always_inline u64 rl_word(u64 addr)
{
	u32 id = bpf_core_type_id_kernel(struct rb_node___rl);
	const struct rb_node___rl *w = bpf_rdonly_cast((void *)addr, id);

	return w->__rb_parent_color;
}

/*
 * where the stack of @site from the event's arguments @nr (rl_number())
 * would be known; false: not on a task's stack
 */
static __always_inline bool rl_known_at(u64 nr, u64 site, struct rl_stack_at *at)
{
	struct task_struct___rl *task = (void *)bpf_get_current_task_btf();
	u64 bottom = (u64)task->stack, size = rl_task_stack_size();

	/* its value stored and read back: a number, as rl_number()'s */
	*(volatile u64 *)&enabled_at = (u64)&enabled;
	at->args = nr + *(volatile u64 *)&enabled_at;
	if (at->args < bottom || at->args >= bottom + size)
		return false;
	at->top = bottom + size;
	at->key = ((site ^ ((at->args - bottom) << 48)) * 0x9e3779b97f4a7c15ULL) | 1;
	at->idx = (at->key >> 52) & (RL_KNOWN - RL_KNOWN_WAYS);
	return true;
}

/* do the words above @at's arguments hold @k's return addresses? (see rl_stack_key()) */
__noinline bool rl_known_holds(const struct rl_known_stack *k, const struct rl_stack_at *at)
{
	u64 args;
	u32 i;

	if (!k || !at || k->key != at->key)
		return false;
	args = at->args;

	for (i = 0; i < RL_BPF_MAX_STACK && i < k->st.nr; i++)
		if (i >= k->first && rl_word(args + k->slot[i] * 8ULL) != k->st.ips[i])
			return false;
	return true;
}

struct rl_scan {
	u64	args;
	u64	top;
	u32	idx;
	s32	next;	/* the frame looked for */
};

/* words of the stack compared in one call of rl_scan_words() */
#define RL_SCAN_WORDS		8

/*
 * From the top of the stack down, the words holding the return addresses,
 * outermost first: a return address into a function lies above that
 * function's own frame, and below it lie the frames it called, whose words
 * may hold a copy of it (an argument such as _RET_IP_).  RL_SCAN_WORDS
 * words a call: bpf_loop() calls its callback indirectly, dearer than
 * comparing a word, and the scan goes down the whole stack in use.
 */
static long rl_scan_words(u64 i, void *data)
{
	struct rl_scan *s = data;
	u64 at = s->top - 8 * RL_SCAN_WORDS * i;
	struct rl_known_stack *k;
	s32 j = s->next;
	u32 m;

	k = bpf_map_lookup_elem(&known_stacks, &s->idx);
	if (!k)
		return 1;
	for (m = 0; m < RL_SCAN_WORDS; m++) {
		at -= 8;
		if (at < s->args || j < 0 || j >= RL_BPF_MAX_STACK) {
			s->next = j;
			return 1;
		}
		if (rl_word(at) == k->st.ips[j]) {
			k->slot[j] = (at - s->args) / 8;
			j--;
		}
	}
	s->next = j;
	return 0;
}

/*
 * @st, unwound from @at, saved as @saved: known in way @idx, if its frames
 * are found; a global function, as rl_stack_key().  0, or -1: not known.
 */
__noinline int rl_known_learn(u32 idx, const struct rl_stack_at *at, const struct rl_bpf_stack *st,
			      u64 saved)
{
	struct rl_known_stack *k = bpf_map_lookup_elem(&known_stacks, &idx);
	struct rl_scan s = { .idx = idx, };

	if (!k || !at || !st)
		return -1;
	s.args = at->args;
	s.top = at->top;
	s.next = st->nr - 1;
	k->key = 0;
	__builtin_memcpy(&k->st, st, sizeof(*st));
	bpf_loop(rl_task_stack_size() / 8 / RL_SCAN_WORDS, rl_scan_words, &s, 0);
	if (s.next >= RL_KNOWN_BELOW || s.next + 1 >= (s32)st->nr)
		return -1;
	k->first = s.next + 1;
	k->saved = saved;
	k->key = at->key;
	return 0;
}

/*
 * The stack of @site from the event's arguments @nr, known in the set of
 * @at: true, in @at->way; false: @at->way is where to learn it, or
 * RL_KNOWN_WAYS, not to be learned (not on a task's stack).  A global
 * function, as rl_stack_key().
 */
__noinline bool rl_known_find(u64 nr, u64 site, struct rl_stack_at *at)
{
	u32 zero = 0, idx, i, empty = RL_KNOWN_WAYS, other = RL_KNOWN_WAYS;
	struct rl_cpu *c = bpf_map_lookup_elem(&cpu_state, &zero);
	struct rl_known_stack *w;

	if (!at)
		return false;
	at->way = RL_KNOWN_WAYS;
	if (!rl_known_at(nr, site, at))
		return false;
	for (i = 0; i < RL_KNOWN_WAYS; i++) {
		idx = at->idx + i;
		w = bpf_map_lookup_elem(&known_stacks, &idx);
		if (!w)
			return false;
		if (rl_known_holds(w, at)) {
			at->way = i;
			return true;
		}
		if (!w->key && empty == RL_KNOWN_WAYS)
			empty = i;
		else if (w->key != at->key && other == RL_KNOWN_WAYS)
			other = i;
	}
	/* into an empty way, else one of another site's, else in turn */
	at->way = empty < RL_KNOWN_WAYS ? empty : other < RL_KNOWN_WAYS ? other :
		  (c ? c->stacks_walked : 0) & (RL_KNOWN_WAYS - 1);
	return false;
}

/*
 * The key of the stack of the event at @ctx, of @site, kept in @map: a
 * stack known, else unwound into @st.  @evicts: the map is an LRU one, a
 * known stack may have gone from it.  0: none (@st may hold it all the same
 * if @quiet: its save to be tried again later).
 */
static __always_inline u64 rl_stack_of(void *ctx, u64 site, void *map, bool evicts, bool quiet,
				       struct rl_bpf_stack *st)
{
	u32 zero = 0, idx;
	struct rl_cpu *c = bpf_map_lookup_elem(&cpu_state, &zero);
	struct rl_stack_at at = {};
	struct rl_known_stack *k;
	u64 saved;

	if (rl_known_find(rl_number(ctx), site, &at)) {
		idx = at.idx + at.way;
		k = bpf_map_lookup_elem(&known_stacks, &idx);
		if (k) {
			if (c)
				c->stacks_known++;
			if (!evicts || bpf_map_lookup_elem(map, &k->saved))
				return k->saved;
			return rl_stack_save(map, &k->st, quiet);
		}
	}
	rl_stack_take(ctx, st);
	saved = rl_stack_save(map, st, quiet);
	if (at.way < RL_KNOWN_WAYS && saved)
		rl_known_learn(at.idx + at.way, &at, st, saved);
	return saved;
}

/* the stack of an event of @kind from @caller */
static __always_inline u64 rl_stack(void *ctx, u32 level, u8 kind, u64 caller)
{
	struct rl_bpf_stack *st = bpf_map_lookup_elem(&stack_scratch, &level);

	if (!st)
		return 0;
	return rl_stack_of(ctx, caller ^ ((u64)kind << 56), &stacks, true, false, st);
}

/*
 * The time of an event: each later than the one before on its CPU.  The
 * clock may count in ticks (a guest whose TSC the kernel gave up on), and
 * an object freed and its address allocated again in one tick must not
 * look like one object to the report, which orders events by time.
 */
static __always_inline u64 rl_now(void)
{
	u32 zero = 0;
	struct rl_cpu *c = bpf_map_lookup_elem(&cpu_state, &zero);
	u64 now = bpf_ktime_get_ns();

	if (!c)
		return now;
	if (now <= c->last_ns)
		now = c->last_ns + 1;
	c->last_ns = now;
	return now;
}

/* the possible CPUs, from the loader: a bound the verifier knows */
const volatile u32 nr_cpus = 1;
/* rl_ref_trace_ref() runs: gets and puts are followed (from the loader) */
const volatile bool follow_refs;
/* ... of the caches these globs match alone (record -b --refs): '*' and '?' */
const volatile char refs_globs[RL_BPF_REFS_GLOBS][RL_BPF_CACHE_NAME];
const volatile u32 nr_refs_globs;

/*
 * The time of a fork or an exit: later than every event given a time so
 * far, on every CPU.  With a clock counting in ticks, the allocations of a
 * fork are stamped a few nanoseconds past the tick on their CPU (rl_now()),
 * and the fork, at the tick itself, would seem to come before them: the
 * report would not see the child handed what the parent allocated for it.
 * The task may have moved to another CPU since: each CPU's last time counts.
 */
static __always_inline u64 rl_now_after_all(void)
{
	u64 now = rl_now();
	u32 zero = 0, cpu;
	struct rl_cpu *c;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		c = bpf_map_lookup_percpu_elem(&cpu_state, &zero, cpu);
		if (!c)
			break;
		if (c->last_ns >= now)
			now = c->last_ns + 1;
	}
	c = bpf_map_lookup_elem(&cpu_state, &zero);
	if (c && c->last_ns < now)
		c->last_ns = now;
	return now;
}

/* an event, with its stack if @stack */
static __always_inline void rl_ev_init(struct rl_bpf_ev *ev, void *ctx, u32 level, u8 kind,
				       u64 caller, bool stack)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();

	ev->time = rl_now();
	ev->caller = caller;
	ev->pid = pid_tgid >> 32;
	ev->tid = (u32)pid_tgid;
	ev->stack = stack ? rl_stack(ctx, level, kind, caller) : 0;
	ev->value = 0;
	ev->offset = 0;
	ev->cpu = bpf_get_smp_processor_id();
	ev->kind = kind;
	ev->ctr_kind = 0;
}

static __always_inline void rl_log(struct rl_bpf_obj *o, const struct rl_bpf_ev *ev)
{
	u32 i = __sync_fetch_and_add(&o->nr_log, 1);

	if (i < RL_BPF_LOG)
		o->log[i] = *ev;
	else
		rl_miss(RL_BPF_MISS_LOG);
}

/* an object's counter got (or put, @put) references at @stack: its shape's bit */
static __always_inline void rl_shape(struct rl_bpf_obj *o, u64 stack, bool put)
{
	u64 h = (stack ^ (put ? 0x9e3779b97f4a7c15ULL : 0)) * 0xff51afd7ed558ccdULL;

	o->shape |= 1ULL << (h >> 58);
}

static __always_inline struct rl_bpf_site *rl_site(struct rl_bpf_obj *o)
{
	struct rl_bpf_site_key key = {
		.call_site = o->call_site,
		.cache = o->cache,
		.stack = o->stack,
	};
	struct rl_bpf_site zero = {}, *site;

	site = bpf_map_lookup_elem(&sites, &key);
	if (site)
		return site;
	if (bpf_map_update_elem(&sites, &key, &zero, BPF_NOEXIST) == -E2BIG) {
		rl_miss(RL_BPF_MISS_SITES);
		return NULL;
	}
	return bpf_map_lookup_elem(&sites, &key);
}

/* what util/refleak.c's refleak__free() learns from a balanced object */
static __always_inline void rl_sum_balanced(struct rl_bpf_obj *o)
{
	struct rl_bpf_site *site = rl_site(o);
	u64 life = o->free.time - o->time;
	bool any_put = false, live = false;
	u32 i;

	if (!site)
		return;
	for (i = 0; i < RL_BPF_MAX_CTRS && i < o->nr_ctrs; i++) {
		if (o->ctrs[i].nr_puts)
			any_put = true;
		if (o->ctrs[i].state == RL_BPF_CTR_LIVE)
			live = true;
	}
	__sync_fetch_and_add(&site->nr_balanced, 1);
	if (!any_put) {
		if (live)
			__sync_fetch_and_add(&site->nr_freed_live_ctr, 1);
		return;
	}
	__sync_fetch_and_add(&site->nr_freed_after_zero, 1);
	if (o->last_put > site->max_freed_put_ns)
		site->max_freed_put_ns = o->last_put;
	if (o->free.time - o->last_put > site->max_put_free_ns)
		site->max_put_free_ns = o->free.time - o->last_put;
	for (i = 0; i < RL_BPF_MAX_CTRS && i < o->nr_ctrs; i++) {
		if (o->ctrs[i].nr_puts) {
			if (!site->nr_puts_at_offset)
				site->put_offset = o->ctrs[i].offset;
			if (site->put_offset == o->ctrs[i].offset)
				__sync_fetch_and_add(&site->nr_puts_at_offset, 1);
			break;
		}
	}
	if (live)
		return;
	if (o->nr_ctrs >= 2)
		__sync_fetch_and_add(&site->nr_freed_all_zero, 1);
	if (!__sync_fetch_and_add(&site->nr_died, 1) || o->time < site->died_first_ns)
		site->died_first_ns = o->time;
	if (o->time > site->died_last_ns)
		site->died_last_ns = o->time;
	if (life > site->max_life_ns)
		site->max_life_ns = life;
}

struct rl_drop_ctx {
	u64	id;
	bool	release;	/* its takers are a reference short */
	bool	forget;		/* the gets and puts go */
};

/* one get or put of a balanced object */
static long rl_drop_one(u64 i, void *ctx)
{
	struct rl_drop_ctx *d = ctx;
	struct rl_ref_key key = { .id = d->id, .nr = i };
	struct rl_bpf_ev *ev = bpf_map_lookup_elem(&refs, &key);

	if (!ev)
		return 0;
	if (d->release && ev->delta > 0)
		rl_own(ev->pid, -1);
	if (d->forget && !bpf_map_delete_elem(&refs, &key))
		__sync_fetch_and_sub(&nr_refs_kept, 1);
	return 0;
}

/*
 * The gets and puts of a balanced object: its takers' exits are no
 * longer needed (@release), and, unless it is a sample written whole,
 * they go (@forget)
 */
static __always_inline void rl_drop_refs(struct rl_bpf_obj *o, bool release, bool forget)
{
	struct rl_drop_ctx d = { .id = o->id, .release = release, .forget = forget };
	u32 n = o->nr_refs < RL_BPF_REFS ? o->nr_refs : RL_BPF_REFS;

	if (n)
		bpf_loop(n, rl_drop_one, &d, 0);
	if (forget)
		o->nr_refs = 0;
}

/* where @o is kept among its site's samples: slot 0 */
static __always_inline void rl_sample_key(const struct rl_bpf_obj *o, struct rl_sample_key *key)
{
	key->site.call_site = o->call_site;
	key->site.cache = o->cache;
	key->site.stack = o->stack;
	key->shape = o->shape;
	key->slot = 0;
	key->pad = 0;
}

/*
 * A balanced object, while gets and puts are followed: kept whole as one
 * of its site's latest samples, the one whose slot it takes summed and
 * forgotten.  Also one that took none: its final put paid its birth back,
 * which the report learns too.  False: summed now (gets and puts not
 * followed, not of its cache, or no room).
 */
static __always_inline bool rl_sample(struct rl_bpf_obj *o)
{
	struct rl_sample_key key;
	struct rl_bpf_obj *old;
	u32 *next, zero = 0;

	if (!follow_refs || o->refs_wanted == 2)
		return false;
	rl_sample_key(o, &key);
	next = bpf_map_lookup_elem(&sample_next, &key);
	if (!next) {
		bpf_map_update_elem(&sample_next, &key, &zero, BPF_NOEXIST);
		next = bpf_map_lookup_elem(&sample_next, &key);
		if (!next)
			return false;
	}
	key.slot = __sync_fetch_and_add(next, 1) % RL_BPF_SAMPLES;
	old = bpf_map_lookup_elem(&samples, &key);
	if (old) {
		rl_sum_balanced(old);
		rl_drop_refs(old, false, true);
	}
	o->sample = key.slot + 1;
	if (bpf_map_update_elem(&samples, &key, o, BPF_ANY)) {
		o->sample = 0;
		return false;
	}
	return true;
}

/* a sample reported after all (a put after its free): written once, as a report */
static __always_inline void rl_unsample(struct rl_bpf_obj *o)
{
	struct rl_sample_key key;
	struct rl_bpf_obj *s;

	if (!o->sample)
		return;
	rl_sample_key(o, &key);
	key.slot = o->sample - 1;
	s = bpf_map_lookup_elem(&samples, &key);
	if (s && s->id == o->id)
		bpf_map_delete_elem(&samples, &key);
	o->sample = 0;
}

static __always_inline void rl_report(struct rl_bpf_obj *o, u64 addr)
{
	struct rl_report_key key = {
		.addr = addr,
		.nr = __sync_fetch_and_add(&nr_reports, 1),
	};

	if (bpf_map_update_elem(&reports, &key, o, BPF_ANY))
		rl_miss(RL_BPF_MISS_REPORTS);
}

static __always_inline void rl_forget_counters(struct rl_bpf_obj *o, bool bury)
{
	u32 i;

	for (i = 0; i < RL_BPF_MAX_CTRS && i < o->nr_ctrs; i++) {
		u64 addr = o->ptr + o->ctrs[i].offset;
		u64 *owner = bpf_map_lookup_elem(&counters, &addr);

		if (owner && *owner == o->ptr)
			bpf_map_delete_elem(&counters, &addr);
		if (bury)
			bpf_map_update_elem(&grave_counters, &addr, &o->ptr, BPF_ANY);
	}
}

static __always_inline void rl_alloc(void *ctx, u32 level, u8 kind, u64 call_site,
				     const void *ptr, u64 size, struct kmem_cache___rl *s)
{
	u32 zero = 0, i;
	struct rl_bpf_recent *r;
	struct rl_bpf_alloc *a;
	struct rl_bpf_obj *o;
	u32 *site;
	u64 pid_tgid, addr = (u64)ptr;

	if (!ptr)
		return;
	r = bpf_map_lookup_elem(&recent, &zero);
	if (!r)
		return;
	/*
	 * Its memory is another object's now: no put after free on it.  Looked
	 * up first: a delete takes the bucket's lock.
	 */
	if (bpf_map_lookup_elem(&graveyard, &addr))
		bpf_map_delete_elem(&graveyard, &addr);
	/*
	 * An object followed there was freed without a free event: kept as
	 * it is, the report sees its address allocated again.
	 */
	o = bpf_map_lookup_elem(&objects, &addr);
	if (o) {
		u32 owner = o->pid;

		rl_report(o, addr);
		rl_forget_counters(o, false);
		if (!bpf_map_delete_elem(&objects, &addr)) {
			__sync_fetch_and_sub(&nr_objects_live, 1);
			rl_own(owner, -1);
		}
	}
	i = r->next++ % RL_BPF_RECENT;
	a = &r->alloc[i];
	/* the allocation it replaces had no counter born in it: one more plain */
	if (a->ptr && !a->followed) {
		site = rl_alloc_site(a->call_site, a->cache);
		if (site && *site < RL_PLAIN_AFTER)
			__sync_fetch_and_add(site, 1);
	}
	pid_tgid = bpf_get_current_pid_tgid();
	a->ptr = (u64)ptr;
	a->size = size;
	a->call_site = call_site;
	a->cache = (u64)s;
	/*
	 * Hashed as read back from the map, a number: the verifier lets no
	 * pointer be multiplied.  volatile: a load, not the register the
	 * compiler knows holds the same value, a pointer still.
	 */
	site = rl_alloc_site(call_site, *(volatile u64 *)&a->cache);
	a->time = rl_now();
	a->pid = pid_tgid >> 32;
	a->tid = (u32)pid_tgid;
	a->stack.nr = 0;
	a->stack_key = 0;
	if (site && (*site & RL_SITE_REFCOUNTED))
		a->stack_key = rl_stack_of(ctx, call_site ^ (*(volatile u64 *)&a->cache << 4),
					   &alloc_stacks, false, true, &a->stack);
	else if (!site || *site < RL_PLAIN_AFTER)
		rl_stack_take(ctx, &a->stack);
	a->cpu = bpf_get_smp_processor_id();
	a->kind = kind;
	a->followed = 0;
}

RL_PROGS(kmalloc, RL_BPF_KMALLOC,
	 rl_alloc(ctx, level, RL_BPF_KMALLOC, call_site, ptr, bytes_alloc, NULL),
	 unsigned long call_site, const void *ptr, unsigned long bytes_req,
	 unsigned long bytes_alloc)

RL_PROGS(kmem_cache_alloc, RL_BPF_CACHE_ALLOC,
	 rl_alloc(ctx, level, RL_BPF_CACHE_ALLOC, call_site, ptr, BPF_CORE_READ(s, size), s),
	 unsigned long call_site, const void *ptr, struct kmem_cache___rl *s)

static __always_inline void rl_free(void *ctx, u32 level, u8 kind, u64 call_site,
				    const void *ptr)
{
	u64 addr = (u64)ptr;
	struct rl_bpf_obj *o;
	bool twice = false;
	u32 i, owner;

	if (!ptr)
		return;
	o = bpf_map_lookup_elem(&objects, &addr);
	if (!o)
		return;
	/* the stack of a free is shown only for an object reported */
	rl_ev_init(&o->free, ctx, level, kind, call_site, false);
	o->flags |= RL_BPF_OBJ_FREED;
	/* what came after it: a clock's tick may hold both */
	o->nr_log_at_free = o->nr_log < RL_BPF_LOG ? o->nr_log : RL_BPF_LOG;
	for (i = 0; i < RL_BPF_MAX_CTRS && i < o->nr_ctrs; i++)
		if (o->ctrs[i].nr_puts > 1)
			twice = true;
	if ((o->flags & RL_BPF_OBJ_ANOMALY) || twice || o->nr_log > RL_BPF_LOG) {
		o->free.stack = rl_stack(ctx, level, kind, call_site);
		rl_report(o, addr);
		rl_forget_counters(o, false);
	} else {
		if (rl_sample(o)) {
			rl_drop_refs(o, true, false);
		} else {
			rl_sum_balanced(o);
			rl_drop_refs(o, true, true);
		}
		rl_forget_counters(o, true);
		bpf_map_update_elem(&graveyard, &addr, o, BPF_ANY);
	}
	owner = o->pid;
	if (!bpf_map_delete_elem(&objects, &addr)) {
		__sync_fetch_and_sub(&nr_objects_live, 1);
		rl_own(owner, -1);
	}
}

RL_PROGS(kfree, RL_BPF_KFREE, rl_free(ctx, level, RL_BPF_KFREE, call_site, ptr),
	 unsigned long call_site, const void *ptr)

RL_PROGS(kmem_cache_free, RL_BPF_CACHE_FREE,
	 rl_free(ctx, level, RL_BPF_CACHE_FREE, call_site, ptr),
	 unsigned long call_site, const void *ptr)

RL_PROGS(kfree_rcu, RL_BPF_KFREE_RCU, rl_free(ctx, level, RL_BPF_KFREE_RCU, call_site, ptr),
	 unsigned long call_site, const void *ptr)

struct rl_probe_ctx {
	u64	ref;
	u64	found;
};

/* the object a counter lies in: the nearest start below it, if it reaches it */
static long rl_probe_one(u64 i, void *ctx)
{
	struct rl_probe_ctx *p = ctx;
	u64 start = (p->ref & ~7ULL) - i * 8;
	struct rl_bpf_obj *o = bpf_map_lookup_elem(&objects, &start);

	if (!o)
		return 0;
	if (p->ref < start + o->size)
		p->found = start;
	return 1;
}

static __always_inline struct rl_bpf_obj *rl_object_below(u64 ref)
{
	struct rl_probe_ctx p = { .ref = ref };

	bpf_loop(RL_PROBE_WORDS, rl_probe_one, &p, 0);
	return p.found ? bpf_map_lookup_elem(&objects, &p.found) : NULL;
}

/* the object followed with a counter born at @ref */
static __always_inline struct rl_bpf_obj *rl_object_by_counter(u64 ref)
{
	u64 *start = bpf_map_lookup_elem(&counters, &ref);

	return start ? bpf_map_lookup_elem(&objects, start) : NULL;
}

/* the object followed with a counter at @ref, or holding it */
static __always_inline struct rl_bpf_obj *rl_object_of(u64 ref)
{
	return rl_object_by_counter(ref) ?: rl_object_below(ref);
}

/* the name of a cache an object followed is in, kept once: live, as the object is */
static __always_inline void rl_cache_name(u64 cache)
{
	struct kmem_cache___rl *s = (struct kmem_cache___rl *)cache;
	char name[RL_BPF_CACHE_NAME] = {};

	if (!s || bpf_map_lookup_elem(&cache_names, &cache))
		return;
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(s, name));
	bpf_map_update_elem(&cache_names, &cache, name, BPF_NOEXIST);
}

/*
 * The object of a counter born in one of its CPU's latest allocations (a
 * new one, or followed already), else in an object followed already
 */
static __always_inline struct rl_bpf_obj *rl_object_new(void *ctx, u64 ref, u64 caller,
							u32 level)
{
	u32 zero = 0, i;
	struct rl_bpf_recent *r = bpf_map_lookup_elem(&recent, &zero);
	struct rl_bpf_obj *o;
	long err;

	if (!r)
		return NULL;
	o = bpf_map_lookup_elem(&scratch, &level);
	if (!o)
		return NULL;
	for (i = 0; i < RL_BPF_RECENT; i++) {
		struct rl_bpf_alloc *a = &r->alloc[(r->next - 1 - i) % RL_BPF_RECENT];

		if (a->ptr && a->ptr <= ref && ref < a->ptr + a->size)
			break;
	}
	if (i == RL_BPF_RECENT) {
		u64 one = 1, *n;

		/* not a recent allocation: an object followed already, below it? */
		o = rl_object_below(ref);
		if (o)
			return o;
		n = bpf_map_lookup_elem(&unplaced, &caller);

		__sync_fetch_and_add(&nr_unplaced_sets, 1);
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			bpf_map_update_elem(&unplaced, &caller, &one, BPF_NOEXIST);
		return NULL;
	}
	__builtin_memset(o, 0, sizeof(*o));
	{
		struct rl_bpf_alloc *a = &r->alloc[(r->next - 1 - i) % RL_BPF_RECENT];
		u32 *site = rl_alloc_site(a->call_site, a->cache);

		if (site && !(*site & RL_SITE_REFCOUNTED))
			__sync_fetch_and_or(site, RL_SITE_REFCOUNTED);
		if (!a->stack_key && !a->stack.nr && !a->followed) {
			/* a site learned as plain: the stack of the birth */
			rl_stack_take(ctx, &a->stack);
			__sync_fetch_and_add(&nr_birth_stacks, 1);
		}
		a->followed = 1;

		o->ptr = a->ptr;
		o->size = a->size;
		o->call_site = a->call_site;
		o->cache = a->cache;
		o->time = a->time;
		o->pid = a->pid;
		o->tid = a->tid;
		o->stack = a->stack_key ?: rl_stack_save(&alloc_stacks, &a->stack, false);
		o->cpu = a->cpu;
		o->kind = a->kind;
		o->id = __sync_fetch_and_add(&last_id, 1) + 1;
	}
	err = bpf_map_update_elem(&objects, &o->ptr, o, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		rl_miss(RL_BPF_MISS_OBJECTS);
		return NULL;
	}
	if (!err)
		rl_cache_name(o->cache);
	if (!err) {
		u64 n = __sync_fetch_and_add(&nr_objects_live, 1) + 1;

		rl_own(o->pid, 1);

		/* not atomic: a maximum a few objects short is as good */
		if (n > max_objects_live)
			max_objects_live = n;
	}
	return bpf_map_lookup_elem(&objects, &o->ptr);
}

static __always_inline struct rl_bpf_ctr *rl_ctr(struct rl_bpf_obj *o, u32 offset)
{
	u32 i;

	for (i = 0; i < RL_BPF_MAX_CTRS; i++) {
		if (i == o->nr_ctrs) {
			o->nr_ctrs++;
			o->ctrs[i].offset = offset;
			o->ctrs[i].state = RL_BPF_CTR_LIVE;
			return &o->ctrs[i];
		}
		if (o->ctrs[i].offset == offset)
			return &o->ctrs[i];
	}
	return NULL;
}

static __always_inline void rl_set(void *ctx, u32 level, u64 caller, u64 addr, int kind,
				   int count)
{
	struct rl_bpf_ctr *ctr;
	struct rl_bpf_obj *o;
	struct rl_bpf_ev ev;

	/* a counter born here: the memory of any object freed here is reused */
	if (bpf_map_lookup_elem(&grave_counters, &addr))
		bpf_map_delete_elem(&grave_counters, &addr);
	/*
	 * A counter born again, or one in a recent allocation (the object
	 * followed there, or a new one), or one in an object followed
	 * already: the probe below it is dear, the last resort.
	 */
	o = rl_object_by_counter(addr) ?: rl_object_new(ctx, addr, caller, level);
	if (!o)
		return;
	/*
	 * A birth's stack is in no output, but for the report's pairing of
	 * gets and puts: the birth is the counter's first reference.
	 */
	rl_ev_init(&ev, ctx, level, RL_BPF_SET, caller, follow_refs);
	ev.offset = addr - o->ptr;
	ev.value = count;
	ev.ctr_kind = kind;
	ctr = rl_ctr(o, ev.offset);
	if (ctr) {
		if (count <= 0) {
			ctr->state = RL_BPF_CTR_RETIRED;
		} else {
			/* born, or revived: a new life */
			ctr->state = RL_BPF_CTR_LIVE;
			ctr->nr_puts = 0;
		}
	}
	if (bpf_map_update_elem(&counters, &addr, &o->ptr, BPF_ANY))
		rl_miss(RL_BPF_MISS_COUNTERS);
	rl_shape(o, ev.stack, false);
	rl_log(o, &ev);
}

RL_PROGS(ref_trace_set, RL_BPF_SET, rl_set(ctx, level, caller, (u64)ref, kind, count),
	 unsigned long caller, const void *ref, int kind, int count)

/* a counter event on an object freed balanced a short while ago */
static __always_inline bool rl_late(u64 addr, struct rl_bpf_ev *ev)
{
	u64 *start = bpf_map_lookup_elem(&grave_counters, &addr);
	struct rl_bpf_obj *o;
	u64 key;

	if (!start)
		return false;
	key = *start;
	o = bpf_map_lookup_elem(&graveyard, &key);
	if (!o || addr < o->ptr || addr >= o->ptr + o->size ||
	    ev->time - o->free.time > RL_GRAVEYARD_NS)
		return false;
	ev->offset = addr - o->ptr;
	o->flags |= RL_BPF_OBJ_LATE;
	rl_unsample(o);
	rl_log(o, ev);
	rl_report(o, key);
	bpf_map_delete_elem(&graveyard, &key);
	bpf_map_delete_elem(&grave_counters, &addr);
	return true;
}

static __always_inline void rl_final_put(void *ctx, u32 level, u64 caller, u64 addr, int kind)
{
	struct rl_bpf_obj *o = rl_object_by_counter(addr);
	struct rl_bpf_ctr *ctr;
	struct rl_bpf_ev ev;

	if (!o && !bpf_map_lookup_elem(&grave_counters, &addr))
		return;	/* allocated before the recording, or not followed */
	rl_ev_init(&ev, ctx, level, RL_BPF_FINAL_PUT, caller, true);
	ev.ctr_kind = kind;
	if (!o) {
		rl_late(addr, &ev);
		return;
	}
	ev.offset = addr - o->ptr;
	ctr = rl_ctr(o, ev.offset);
	if (ctr) {
		ctr->state = RL_BPF_CTR_ZERO;
		ctr->nr_puts++;
	}
	o->last_put = ev.time;
	rl_shape(o, ev.stack, true);
	rl_log(o, &ev);
}

RL_PROGS(ref_trace_final_put, RL_BPF_FINAL_PUT, rl_final_put(ctx, level, caller, (u64)ref, kind),
	 unsigned long caller, const void *ref, int kind)

static __always_inline void rl_anomaly(void *ctx, u32 level, u64 caller, u64 addr, int kind,
				       int type)
{
	struct rl_bpf_obj *o;
	struct rl_bpf_ev ev;

	rl_ev_init(&ev, ctx, level, RL_BPF_ANOMALY, caller, true);
	ev.value = type;
	ev.ctr_kind = kind;
	o = rl_object_of(addr);
	if (o) {
		ev.offset = addr - o->ptr;
		o->flags |= RL_BPF_OBJ_ANOMALY;
		rl_log(o, &ev);
	} else if (!rl_late(addr, &ev)) {
		/* on no object followed: reported alone, by its counter */
		o = bpf_map_lookup_elem(&scratch, &level);
		if (o) {
			__builtin_memset(o, 0, sizeof(*o));
			o->ptr = addr;
			o->flags = RL_BPF_OBJ_ORPHAN;
			o->nr_log = 1;
			o->log[0] = ev;
			rl_report(o, addr);
		}
	}
}

RL_PROGS(ref_trace_anomaly, RL_BPF_ANOMALY, rl_anomaly(ctx, level, caller, (u64)ref, kind, type),
	 unsigned long caller, const void *ref, int kind, int type)

/*
 * A cache's name against one glob of --refs, a step at a time: '?' is
 * any character, '*' any run of them, tried shortest first (back to the
 * last '*' and one character further when the rest does not match).
 */
struct rl_glob {
	char	name[RL_BPF_CACHE_NAME];
	u32	glob;
	s32	i, j;		/* in the name, in the glob */
	s32	star, mark;	/* the last '*' and where its run ends; -1: none */
	bool	match;
};

static long rl_glob_step(u64 step, void *ctx)
{
	struct rl_glob *m = ctx;
	u32 g = m->glob < RL_BPF_REFS_GLOBS ? m->glob : 0;
	char c = m->i < RL_BPF_CACHE_NAME - 1 ? m->name[m->i & (RL_BPF_CACHE_NAME - 1)] : 0;
	char pc = m->j < RL_BPF_CACHE_NAME - 1 ? refs_globs[g][m->j & (RL_BPF_CACHE_NAME - 1)] : 0;

	if (!c) {
		if (pc == '*') {
			m->j++;
			return 0;
		}
		m->match = !pc;
		return 1;
	}
	if (pc && (pc == '?' || pc == c)) {
		m->i++;
		m->j++;
	} else if (pc == '*') {
		m->star = m->j++;
		m->mark = m->i;
	} else if (m->star >= 0) {
		m->j = m->star + 1;
		m->i = ++m->mark;
	} else {
		return 1;
	}
	return 0;
}

/*
 * --refs: are the gets and puts of @o's cache followed?  Its name, as the
 * event gives it (kmalloc()'s objects are in no cache the allocation
 * names), matched at the object's first get or put.
 */
static __always_inline bool rl_refs_wanted(struct rl_bpf_obj *o, const char *cache)
{
	struct rl_glob m = {};
	u32 g;

	if (o->refs_wanted)
		return o->refs_wanted == 1;
	bpf_probe_read_kernel_str(m.name, sizeof(m.name), cache);
	for (g = 0; g < RL_BPF_REFS_GLOBS && g < nr_refs_globs && !m.match; g++) {
		m.glob = g;
		m.i = 0;
		m.j = 0;
		m.star = -1;
		bpf_loop(RL_BPF_CACHE_NAME * (RL_BPF_CACHE_NAME + 1), rl_glob_step, &m, 0);
	}
	o->refs_wanted = m.match ? 1 : 2;
	return m.match;
}

/*
 * A get or a put that left references (ref_trace_ref) on a counter of an
 * object followed, kept under the object's id.  One program: a busy
 * kernel makes millions a second, nearly all of counters not followed,
 * which it leaves at the lookup of the counter.  An event it misses
 * (nested in it: an interrupt's on its CPU) is a count that does not
 * follow from the ones before in the object's gets and puts, which makes
 * what the report names of that object uncertain.  Past the first
 * RL_BPF_REFS - 1, the last slot holds the latest: the same.  The task
 * of a get kept is kept too (its exit tells whether it still holds it).
 */
SEC("tp_btf/ref_trace_ref")
int BPF_PROG(rl_ref_trace_ref, unsigned long caller, const void *ref, int kind, int old,
	     int delta, const char *cache)
{
	struct rl_ref_key key = {};
	struct rl_bpf_ev ev, *prev;
	struct rl_bpf_obj *o;
	u32 nr;

	if (!enabled)
		return 0;
	o = rl_object_by_counter((u64)ref);
	if (!o || (nr_refs_globs && !rl_refs_wanted(o, cache)))
		return 0;
	bpf_preempt_disable();
	rl_ev_init(&ev, ctx, RL_REF_LEVEL, RL_BPF_REF, caller, true);
	ev.offset = (u64)ref - o->ptr;
	ev.value = old;
	ev.delta = delta;
	ev.ctr_kind = kind;
	__sync_fetch_and_add(&nr_refs_seen, 1);
	rl_shape(o, ev.stack, delta < 0);
	nr = __sync_fetch_and_add(&o->nr_refs, 1);
	key.id = o->id;
	key.nr = nr < RL_BPF_REFS ? nr : RL_BPF_REFS - 1;
	prev = nr >= RL_BPF_REFS - 1 ? bpf_map_lookup_elem(&refs, &key) : NULL;
	if (prev) {
		__sync_fetch_and_add(&nr_refs_not_kept, 1);
		if (prev->delta > 0)
			rl_own(prev->pid, -1);
	}
	if (bpf_map_update_elem(&refs, &key, &ev, BPF_ANY)) {
		__sync_fetch_and_add(&nr_refs_map_full, 1);
		goto out;
	}
	if (delta > 0)
		rl_own(ev.pid, 1);
	if (!prev) {
		u64 n = __sync_fetch_and_add(&nr_refs_kept, 1) + 1;

		/* not atomic: a maximum a few short is as good */
		if (n > max_refs_kept)
			max_refs_kept = n;
	}
out:
	bpf_preempt_enable();
	return 0;
}

/* a new process (not a thread): kept while it runs */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(rl_fork, struct task_struct *parent, struct task_struct *child)
{
	struct rl_bpf_proc n = {}, *old, *pp;
	u32 pid = child->tgid;

	if (!enabled || child->pid != pid)
		return 0;
	n.fork_ns = rl_now_after_all();
	n.ppid = parent->tgid;
	bpf_probe_read_kernel_str(n.comm, sizeof(n.comm), child->comm);
	pp = rl_proc(n.ppid);
	/*
	 * The pid of a process kept after its exit, taken again: the new
	 * process's.  The old one's exit is forgotten (what it allocated
	 * loses that evidence), and its parent has a child fewer.
	 */
	old = bpf_map_lookup_elem(&procs, &pid);
	if (old && old->fork_ns) {
		struct rl_bpf_proc *op = bpf_map_lookup_elem(&procs, &old->ppid);

		if (op)
			__sync_fetch_and_sub(&op->nr_children, 1);
	}
	if (bpf_map_update_elem(&procs, &pid, &n, BPF_ANY)) {
		rl_miss(RL_BPF_MISS_PROCS);
		return 0;
	}
	if (pp)
		__sync_fetch_and_add(&pp->nr_children, 1);
	return 0;
}

/* the exit of a process's first thread: perf's exit record, which the report reads */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(rl_exit, struct task_struct *task, bool group_dead)
{
	u32 pid = task->tgid;
	struct rl_bpf_proc *p;

	if (!enabled || task->pid != pid)
		return 0;
	/* none: from before the recording, owning nothing followed, no child kept */
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p)
		return 0;
	bpf_probe_read_kernel_str(p->comm, sizeof(p->comm), task->comm);
	p->exit_ns = rl_now_after_all();
	rl_proc_prune(pid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
