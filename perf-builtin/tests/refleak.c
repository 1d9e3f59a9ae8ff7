// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the 'perf refleak' correlation engine (util/refleak.c):
 * synthetic alloc / free / set / final put / anomaly / exit sequences, one
 * per verdict class and per tricky case (address reuse, cross-CPU ordering,
 * objects allocated before the recording, refcount offsets, NULL
 * allocations, lost events), the ranking rules of the tiers, and the
 * pairing of gets with puts that names the references never put.
 */
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <perf/event.h>

#include "tests.h"
#include "util/debug.h"
#include "util/ordered-events.h"
#include "util/refleak.h"
#include "util/refleak-refs.h"

#define MS	(1000ULL * 1000)
#define SEC	(1000ULL * MS)
#define T0	(100 * SEC)

#define SITE_A	0xffffffff81001000ULL
#define SITE_B	0xffffffff81002000ULL
#define SITE_N	0xffffffff81003000ULL	/* never refcounted */
#define SITE_F	0xffffffff81007000ULL	/* struct file's, in the filp cache */

/* the cache of a test site's objects */
static const char *site_cache(u64 site)
{
	return site == SITE_N ? NULL : site == SITE_F ? REFLEAK_FILE_CACHE : "c";
}

static struct refleak *new_engine(bool keep_objects)
{
	struct refleak_config cfg;

	refleak_config__init(&cfg);
	cfg.keep_objects = keep_objects;
	return refleak__new(&cfg);
}

static int ev_alloc(struct refleak *rl, u64 t, u64 ptr, u64 size, u64 site,
		    const char *cache, u32 stack)
{
	struct refleak_alloc_ev ev = {
		.time = t, .ptr = ptr, .bytes_alloc = size, .call_site = site,
		.cache = cache, .stack = stack,
	};
	return refleak__alloc(rl, &ev);
}

static int ev_free(struct refleak *rl, u64 t, u64 ptr, const char *cache, u32 stack)
{
	struct refleak_free_ev ev = { .time = t, .ptr = ptr, .cache = cache, .stack = stack, };

	return refleak__free(rl, &ev);
}

static int ev_put(struct refleak *rl, u64 t, u64 obj, u32 stack)
{
	struct refleak_put_ev ev = {
		.time = t, .obj = obj, .stack = stack,
	};
	return refleak__final_put(rl, &ev);
}

static int ev_alloc_pid(struct refleak *rl, u64 t, u64 ptr, u64 site, u32 stack, int pid)
{
	struct refleak_alloc_ev ev = {
		.time = t, .ptr = ptr, .bytes_alloc = 128, .call_site = site,
		.cache = site_cache(site), .stack = stack, .pid = pid,
	};
	return refleak__alloc(rl, &ev);
}

static int ev_set(struct refleak *rl, u64 t, u64 obj, s64 count)
{
	struct refleak_set_ev ev = { .time = t, .obj = obj, .count = count, };

	return refleak__set(rl, &ev);
}

static int ev_anomaly(struct refleak *rl, u64 t, u64 obj, enum refleak_anomaly type,
		      u64 caller)
{
	struct refleak_anomaly_ev ev = { .time = t, .obj = obj, .type = type, .caller = caller, };

	return refleak__anomaly(rl, &ev);
}

static const struct refleak_stats *finish(struct refleak *rl, u64 end)
{
	refleak__finish(rl, end);
	return refleak__stats(rl);
}

/* the single reported group of a class, NULL if none or several */
static struct refleak_group *only_group(struct refleak *rl, enum refleak_class class)
{
	size_t nr;
	struct refleak_group **arr = refleak__groups(rl, class, &nr);
	struct refleak_group *g = nr == 1 ? arr[0] : NULL;

	free(arr);
	return g;
}

static u64 nr_suspicious(const struct refleak_stats *st)
{
	u64 n = 0;
	int c;

	for (c = 0; c < REFLEAK_BALANCED; c++)
		n += st->class_count[c];
	return n;
}

static int test__refleak_balanced(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	int ret = TEST_FAIL;

	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0, 0x1000, 64, SITE_A, "test_refleak_obj", 0);
	ev_put(rl, T0 + 1 * MS, 0x1000 + 16, 0);
	ev_free(rl, T0 + 2 * MS, 0x1000, "test_refleak_obj", 0);
	st = finish(rl, T0 + 5 * SEC);
	if (st->class_count[REFLEAK_BALANCED] != 1 || nr_suspicious(st) != 0 ||
	    st->nr_unmatched_put || st->nr_inferred || st->nr_uncertain) {
		pr_debug("balanced: %" PRIu64 " suspicious %" PRIu64 "\n",
			 st->class_count[REFLEAK_BALANCED], nr_suspicious(st));
		goto out;
	}
	ret = TEST_OK;
out:
	refleak__delete(rl);
	return ret;
}

static int test__refleak_classes(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;
	u64 now = T0;
	int ret = TEST_FAIL;

	TEST_ASSERT_VAL("engine", rl);
	/* site A becomes refcounted: a balanced object, put at offset 8 */
	ev_alloc(rl, now += MS, 0x10000, 128, SITE_A, "c", 0);
	ev_put(rl, now += MS, 0x10008, 0);
	ev_free(rl, now += MS, 0x10000, "c", 0);
	/* freed_without_final_put: site A object freed, no final put */
	ev_alloc(rl, now += MS, 0x20000, 128, SITE_A, "c", 0);
	ev_free(rl, now += 3 * MS, 0x20000, "c", 0);
	/* same pattern at a site never seen refcounted: not reported */
	ev_alloc(rl, now += MS, 0x30000, 32, SITE_N, NULL, 0);
	ev_free(rl, now += MS, 0x30000, NULL, 0);
	ev_alloc(rl, now += MS, 0x31000, 32, SITE_N, NULL, 0);	/* live at end */
	/* final_put_not_freed: put long before the end, never freed */
	ev_alloc(rl, now += MS, 0x40000, 128, SITE_A, "c", 0);
	ev_put(rl, now += MS, 0x40008, 0);
	/* outstanding: allocated, never put, never freed */
	ev_alloc(rl, now += MS, 0x50000, 128, SITE_A, "c", 0);
	/* put_after_free */
	ev_alloc(rl, now += MS, 0x60000, 128, SITE_A, "c", 0);
	ev_free(rl, now += MS, 0x60000, "c", 0);
	ev_put(rl, now += 2 * MS, 0x60008, 0);
	/* double_put */
	ev_alloc(rl, now += MS, 0x70000, 128, SITE_A, "c", 0);
	ev_put(rl, now += MS, 0x70008, 0);
	ev_put(rl, now += 4 * MS, 0x70008, 0);
	ev_free(rl, now += MS, 0x70000, "c", 0);
	/* final put just before the end (kfree_rcu pending): not flagged */
	ev_alloc(rl, now += MS, 0x80000, 128, SITE_A, "c", 0);
	ev_put(rl, T0 + 10 * SEC - 10 * MS, 0x80008, 0);

	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("balanced", st->class_count[REFLEAK_BALANCED] == 1);
	TEST_ASSERT_VAL("freed_without_final_put",
			st->class_count[REFLEAK_FREED_WITHOUT_FINAL_PUT] == 1);
	TEST_ASSERT_VAL("final_put_not_freed", st->class_count[REFLEAK_FINAL_PUT_NOT_FREED] == 1);
	TEST_ASSERT_VAL("outstanding", st->class_count[REFLEAK_OUTSTANDING] == 1);
	TEST_ASSERT_VAL("put_after_free", st->class_count[REFLEAK_PUT_AFTER_FREE] == 1);
	TEST_ASSERT_VAL("double_put", st->class_count[REFLEAK_DOUBLE_PUT] == 1);
	TEST_ASSERT_VAL("pending free (min-age)", st->nr_pending_free == 1);
	TEST_ASSERT_VAL("untracked site", st->nr_untracked == 2);

	g = only_group(rl, REFLEAK_FREED_WITHOUT_FINAL_PUT);
	TEST_ASSERT_VAL("fwfp group", g && g->site->call_site == SITE_A && g->bytes == 128);
	TEST_ASSERT_VAL("fwfp age = lifetime", g->max_age_ns == 3 * MS);
	TEST_ASSERT_VAL("site offset", g->site->offset_known && g->site->ref_offset == 8 &&
			!g->site->offset_mixed);
	g = only_group(rl, REFLEAK_PUT_AFTER_FREE);
	TEST_ASSERT_VAL("paf age = put - free", g && g->max_age_ns == 2 * MS);
	g = only_group(rl, REFLEAK_DOUBLE_PUT);
	TEST_ASSERT_VAL("double put age", g && g->max_age_ns == 4 * MS);
	TEST_ASSERT_VAL("double put object", g->nr_objects == 1 && g->objects[0].addr == 0x70000);
	g = only_group(rl, REFLEAK_OUTSTANDING);
	TEST_ASSERT_VAL("lnfp object", g && g->nr_objects == 1 &&
			g->objects[0].addr == 0x50000 && !g->objects[0].free_ns);
	ret = TEST_OK;
	refleak__delete(rl);
	return ret;
}

static int test__refleak_reuse(struct test_suite *test __maybe_unused,
			       int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;

	TEST_ASSERT_VAL("engine", rl);
	/* same address, two lifetimes from two sites, both balanced */
	ev_alloc(rl, T0 + 1 * MS, 0xa000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 2 * MS, 0xa010, 0);
	ev_free(rl, T0 + 3 * MS, 0xa000, "c", 0);
	ev_alloc(rl, T0 + 4 * MS, 0xa000, 64, SITE_B, "c", 0);
	ev_put(rl, T0 + 5 * MS, 0xa010, 0);	/* belongs to the new object */
	ev_free(rl, T0 + 6 * MS, 0xa000, "c", 0);
	/* reused again, this time freed without put: only site B's object flagged */
	ev_alloc(rl, T0 + 7 * MS, 0xa000, 64, SITE_B, "c", 0);
	ev_free(rl, T0 + 8 * MS, 0xa000, "c", 0);
	/* a smaller object inside the old range after free: a put on it is not after free */
	ev_alloc(rl, T0 + 9 * MS, 0xa000, 32, SITE_A, "c", 0);
	ev_put(rl, T0 + 10 * MS, 0xa010, 0);
	ev_free(rl, T0 + 11 * MS, 0xa000, "c", 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("balanced x3", st->class_count[REFLEAK_BALANCED] == 3);
	TEST_ASSERT_VAL("no put after free", st->class_count[REFLEAK_PUT_AFTER_FREE] == 0);
	TEST_ASSERT_VAL("no double put", st->class_count[REFLEAK_DOUBLE_PUT] == 0);
	g = only_group(rl, REFLEAK_FREED_WITHOUT_FINAL_PUT);
	TEST_ASSERT_VAL("fwfp at site B", g && g->site->call_site == SITE_B && g->count == 1);
	TEST_ASSERT_VAL("no missed free", st->nr_missed_free == 0);
	refleak__delete(rl);

	/* reallocation without a free: the free was not seen, old object uncertain */
	rl = new_engine(true);
	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0 + 1 * MS, 0xb000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 2 * MS, 0xb008, 0);
	ev_alloc(rl, T0 + 3 * MS, 0xb000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 4 * MS, 0xb008, 0);
	ev_free(rl, T0 + 5 * MS, 0xb000, "c", 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("missed free counted", st->nr_missed_free == 1);
	TEST_ASSERT_VAL("both balanced", st->class_count[REFLEAK_BALANCED] == 2);
	TEST_ASSERT_VAL("not a double put", st->class_count[REFLEAK_DOUBLE_PUT] == 0);
	TEST_ASSERT_VAL("old one uncertain", st->nr_uncertain == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * The builtin relies on perf's ordered events to deliver samples from all
 * CPUs in time order.  Two per-CPU streams (as they come out of two ring
 * buffers) are queued, flushed, and fed to the engine.
 */
enum { T_ALLOC, T_PUT, T_FREE };

struct test_event {
	struct perf_event_header header;
	int	type;
	int	cpu;
	u64	time;
	u64	addr;
};

static int deliver(struct ordered_events *oe, struct ordered_event *oev)
{
	struct refleak *rl = oe->data;
	struct test_event *e = (struct test_event *)oev->event;

	switch (e->type) {
	case T_ALLOC:
		return ev_alloc(rl, e->time, e->addr, 64, SITE_A, "c", 0);
	case T_PUT:
		return ev_put(rl, e->time, e->addr, 0);
	case T_FREE:
	default:
		return ev_free(rl, e->time, e->addr, "c", 0);
	}
}

static int test__refleak_ordering(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	/* object allocated on CPU0, put and freed on CPU1, address reused on CPU0 */
	static struct test_event cpu0[] = {
		{ .type = T_ALLOC, .cpu = 0, .time = T0 + 1, .addr = 0xc000 },
		{ .type = T_ALLOC, .cpu = 0, .time = T0 + 6, .addr = 0xc000 },
		{ .type = T_PUT,   .cpu = 0, .time = T0 + 7, .addr = 0xc020 },
		{ .type = T_FREE,  .cpu = 0, .time = T0 + 8, .addr = 0xc000 },
	};
	static struct test_event cpu1[] = {
		{ .type = T_PUT,   .cpu = 1, .time = T0 + 3, .addr = 0xc020 },
		{ .type = T_FREE,  .cpu = 1, .time = T0 + 4, .addr = 0xc000 },
	};
	struct ordered_events oe;
	const struct refleak_stats *st;
	struct refleak *rl;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cpu0); i++)
		cpu0[i].header.size = sizeof(cpu0[i]);
	for (i = 0; i < ARRAY_SIZE(cpu1); i++)
		cpu1[i].header.size = sizeof(cpu1[i]);

	/* fed per CPU buffer, unsorted: the engine sees time going backwards */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	for (i = 0; i < ARRAY_SIZE(cpu0); i++)
		deliver(&(struct ordered_events){ .data = rl },
			&(struct ordered_event){ .event = (union perf_event *)&cpu0[i] });
	for (i = 0; i < ARRAY_SIZE(cpu1); i++)
		deliver(&(struct ordered_events){ .data = rl },
			&(struct ordered_event){ .event = (union perf_event *)&cpu1[i] });
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("unsorted input detected", st->nr_out_of_order > 0);
	TEST_ASSERT_VAL("unsorted input gives wrong verdicts",
			st->class_count[REFLEAK_BALANCED] != 2);
	refleak__delete(rl);

	/* through ordered events, as perf_session does */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	memset(&oe, 0, sizeof(oe));	/* __init() leaves the other fields alone */
	ordered_events__init(&oe, deliver, rl);
	for (i = 0; i < ARRAY_SIZE(cpu0); i++)
		ordered_events__queue(&oe, (union perf_event *)&cpu0[i], cpu0[i].time, 0, NULL);
	for (i = 0; i < ARRAY_SIZE(cpu1); i++)
		ordered_events__queue(&oe, (union perf_event *)&cpu1[i], cpu1[i].time, 0, NULL);
	ordered_events__flush(&oe, OE_FLUSH__FINAL);
	ordered_events__free(&oe);
	st = finish(rl, T0 + 10 * SEC);
	pr_debug("ordered: out of order %" PRIu64 ", balanced %" PRIu64 ", suspicious %" PRIu64
		 ", missed free %" PRIu64 "\n", st->nr_out_of_order,
		 st->class_count[REFLEAK_BALANCED], nr_suspicious(st), st->nr_missed_free);
	TEST_ASSERT_VAL("ordered: in order", st->nr_out_of_order == 0);
	TEST_ASSERT_VAL("ordered: both balanced", st->class_count[REFLEAK_BALANCED] == 2);
	TEST_ASSERT_VAL("ordered: nothing suspicious", nr_suspicious(st) == 0);
	TEST_ASSERT_VAL("ordered: no missed free", st->nr_missed_free == 0);
	refleak__delete(rl);
	return TEST_OK;
}

static int test__refleak_preexisting(struct test_suite *test __maybe_unused,
				     int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;
	u64 now = T0;

	TEST_ASSERT_VAL("engine", rl);
	/* learn: cache "obj" holds its refcount at offset 24 */
	ev_alloc(rl, now += MS, 0x1000, 96, SITE_A, "obj", 0);
	ev_put(rl, now += MS, 0x1000 + 24, 0);
	ev_free(rl, now += MS, 0x1000, "obj", 0);
	/* object from before the recording: put, then freed: inferred balanced */
	ev_put(rl, now += MS, 0x9000 + 24, 0);
	ev_free(rl, now += MS, 0x9000, "obj", 0);
	/* pre-existing double put */
	ev_put(rl, now += MS, 0x9400 + 24, 0);
	ev_put(rl, now += MS, 0x9400 + 24, 0);
	ev_free(rl, now += MS, 0x9400, "obj", 0);
	/* a put on an unknown address that is never freed stays unmatched */
	ev_put(rl, now += MS, 0x7777, 0);
	/* a free of another cache without learned offset is just unmatched */
	ev_free(rl, now += MS, 0xe000, "other", 0);
	/* a later put inside an inferred object, after its free: put after free */
	ev_put(rl, now += MS, 0x9000 + 24, 0);

	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("one real balanced", st->class_count[REFLEAK_BALANCED] == 1);
	TEST_ASSERT_VAL("inferred double put", st->class_count[REFLEAK_DOUBLE_PUT] == 1);
	TEST_ASSERT_VAL("inferred put after free", st->class_count[REFLEAK_PUT_AFTER_FREE] == 1);
	TEST_ASSERT_VAL("inferred count", st->nr_inferred == 2);
	TEST_ASSERT_VAL("unmatched put", st->nr_unmatched_put == 1);
	TEST_ASSERT_VAL("unmatched free", st->nr_unmatched_free == 1);
	TEST_ASSERT_VAL("matches", st->nr_inferred_matches == 2);
	g = only_group(rl, REFLEAK_DOUBLE_PUT);
	TEST_ASSERT_VAL("pseudo site", g && g->site->call_site == 0 &&
			!strcmp(g->site->cache, "obj") && g->site->ref_offset == 24);
	TEST_ASSERT_VAL("inferred object", g->nr_objects == 1 && g->objects[0].inferred &&
			g->objects[0].addr == 0x9400);
	refleak__delete(rl);
	return TEST_OK;
}

static int test__refleak_offsets(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;

	TEST_ASSERT_VAL("engine", rl);
	/* refcount at the last byte range of the object */
	ev_alloc(rl, T0 + 1 * MS, 0x2000, 64, SITE_A, "c", 0);
	ev_alloc(rl, T0 + 1 * MS, 0x2040, 64, SITE_B, "c", 0);	/* neighbour */
	ev_put(rl, T0 + 2 * MS, 0x2000 + 56, 0);
	ev_free(rl, T0 + 3 * MS, 0x2000, "c", 0);
	/* exactly at start + size: belongs to the neighbour, not to 0x2000 */
	ev_put(rl, T0 + 4 * MS, 0x2040, 0);
	ev_free(rl, T0 + 5 * MS, 0x2040, "c", 0);
	/* an address in no allocation */
	ev_put(rl, T0 + 6 * MS, 0x5000, 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("two balanced", st->class_count[REFLEAK_BALANCED] == 2);
	TEST_ASSERT_VAL("nothing suspicious", nr_suspicious(st) == 0);
	TEST_ASSERT_VAL("one unmatched", st->nr_unmatched_put == 1);
	refleak__delete(rl);

	/* a site whose objects get put at two offsets */
	rl = new_engine(true);
	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0 + 1 * MS, 0x2000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 2 * MS, 0x2008, 0);
	ev_free(rl, T0 + 3 * MS, 0x2000, "c", 0);
	ev_alloc(rl, T0 + 4 * MS, 0x3000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 5 * MS, 0x3010, 0);
	ev_alloc(rl, T0 + 6 * MS, 0x4000, 64, SITE_A, "c", 0);
	st = finish(rl, T0 + 10 * SEC);
	g = only_group(rl, REFLEAK_OUTSTANDING);
	TEST_ASSERT_VAL("mixed offsets", g && g->site->offset_mixed);
	TEST_ASSERT_VAL("fpnf", st->class_count[REFLEAK_FINAL_PUT_NOT_FREED] == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/* an object with several refcounts, each reaching zero once: no double put */
static int test__refleak_several_refs(struct test_suite *test __maybe_unused,
				      int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;

	TEST_ASSERT_VAL("engine", rl);
	/* like task_struct: stack_refcount, then usage reach zero, then the free */
	ev_alloc(rl, T0 + 1 * MS, 0x9000, 256, SITE_A, "c", 0);
	ev_put(rl, T0 + 2 * MS, 0x9000 + 0x40, 0);
	ev_put(rl, T0 + 3 * MS, 0x9000 + 0x20, 0);
	ev_free(rl, T0 + 4 * MS, 0x9000, "c", 0);
	/* the same refcount twice is still a double put */
	ev_alloc(rl, T0 + 5 * MS, 0xa000, 256, SITE_A, "c", 0);
	ev_put(rl, T0 + 6 * MS, 0xa000 + 0x20, 0);
	ev_put(rl, T0 + 7 * MS, 0xa000 + 0x40, 0);
	ev_put(rl, T0 + 8 * MS, 0xa000 + 0x20, 0);
	ev_free(rl, T0 + 9 * MS, 0xa000, "c", 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("two refcounts: balanced", st->class_count[REFLEAK_BALANCED] == 1);
	TEST_ASSERT_VAL("same refcount twice: double put",
			st->class_count[REFLEAK_DOUBLE_PUT] == 1);
	TEST_ASSERT_VAL("nothing else", nr_suspicious(st) == 1);
	refleak__delete(rl);
	return TEST_OK;
}

static int test__refleak_null(struct test_suite *test __maybe_unused,
			      int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;

	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0 + 1 * MS, 0x1000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 2 * MS, 0x1008, 0);
	ev_free(rl, T0 + 3 * MS, 0x1000, "c", 0);
	ev_alloc(rl, T0 + 4 * MS, 0, 64, SITE_A, "c", 0);			/* NULL */
	ev_alloc(rl, T0 + 5 * MS, (u64)-12LL, 64, SITE_A, "c", 0);	/* ERR_PTR(-ENOMEM) */
	ev_free(rl, T0 + 6 * MS, 0, NULL, 0);				/* kfree(NULL) */
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("ignored", st->nr_ignored_alloc == 2);
	TEST_ASSERT_VAL("no live object", st->class_count[REFLEAK_OUTSTANDING] == 0);
	TEST_ASSERT_VAL("nothing suspicious", nr_suspicious(st) == 0);
	TEST_ASSERT_VAL("no unmatched free", st->nr_unmatched_free == 0);
	refleak__delete(rl);
	return TEST_OK;
}

static int test__refleak_lost(struct test_suite *test __maybe_unused,
			      int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;
	size_t i;

	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0 + 1 * MS, 0x1000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 2 * MS, 0x1008, 0);
	ev_free(rl, T0 + 3 * MS, 0x1000, "c", 0);
	/* before the loss window: history ends before it, certain */
	ev_alloc(rl, T0 + 4 * MS, 0x2000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 5 * MS, 0x2000, "c", 0);
	/* spans the loss window: its final put may have been lost */
	ev_alloc(rl, T0 + 6 * MS, 0x3000, 64, SITE_A, "c", 0);
	refleak__lost(rl, T0 + 7 * MS, T0 + 8 * MS, 5);
	/* after the window: certain */
	ev_alloc(rl, T0 + 9 * MS, 0x4000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 10 * MS, 0x4000, "c", 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("lost counted", st->nr_lost == 5);
	TEST_ASSERT_VAL("one uncertain", st->nr_uncertain == 1);
	g = only_group(rl, REFLEAK_OUTSTANDING);
	TEST_ASSERT_VAL("uncertain live", g && g->nr_uncertain == 1 && g->objects[0].uncertain);
	g = only_group(rl, REFLEAK_FREED_WITHOUT_FINAL_PUT);
	TEST_ASSERT_VAL("certain freed", g && g->count == 2 && g->nr_uncertain == 0);
	for (i = 0; i < g->nr_objects; i++)
		TEST_ASSERT_VAL("object certain", !g->objects[i].uncertain);
	refleak__delete(rl);

	/* loss with unknown time: everything uncertain */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0 + 1 * MS, 0x1000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 2 * MS, 0x1008, 0);
	ev_alloc(rl, T0 + 3 * MS, 0x2000, 64, SITE_A, "c", 0);
	refleak__lost(rl, 0, 0, 1);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("all uncertain", st->nr_uncertain == 2);
	refleak__delete(rl);
	return TEST_OK;
}

static int test__refleak_stacks(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	static const u64 st1[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
	static const u64 st2[] = { 0xffffffff81000010ULL, 0xffffffff81000030ULL };
	struct refleak_config cfg;
	struct refleak_stack_count *sc;
	struct refleak_group *g;
	struct refleak *rl;
	u32 id1, id2, nr;
	size_t n;
	int i;

	refleak_config__init(&cfg);
	cfg.keep_objects = true;
	cfg.max_objects_per_group = 2;
	rl = refleak__new(&cfg);
	TEST_ASSERT_VAL("engine", rl);
	id1 = refleak__intern_stack(rl, st1, 2);
	id2 = refleak__intern_stack(rl, st2, 2);
	TEST_ASSERT_VAL("distinct ids", id1 && id2 && id1 != id2);
	TEST_ASSERT_VAL("same stack same id", refleak__intern_stack(rl, st1, 2) == id1);
	TEST_ASSERT_VAL("prefix is another stack", refleak__intern_stack(rl, st1, 1) != id1);
	TEST_ASSERT_VAL("lookup", refleak__stack(rl, id2, &nr)[1] == st2[1] && nr == 2);
	TEST_ASSERT_VAL("empty stack", refleak__intern_stack(rl, st1, 0) == 0);

	ev_alloc(rl, T0, 0x100, 64, SITE_A, "c", id1);
	ev_put(rl, T0 + 1, 0x108, id2);
	ev_free(rl, T0 + 2, 0x100, "c", id2);
	for (i = 0; i < 5; i++)	/* 5 leaks, 4 from stack 1, 1 from stack 2 */
		ev_alloc(rl, T0 + 10 + i, 0x1000 + i * 0x100, 64, SITE_A, "c", i ? id1 : id2);
	finish(rl, T0 + 10 * SEC);
	g = only_group(rl, REFLEAK_OUTSTANDING);
	TEST_ASSERT_VAL("group", g && g->count == 5 && g->bytes == 5 * 64);
	TEST_ASSERT_VAL("objects bounded", g->nr_objects == 2 && g->objects_dropped == 3);
	sc = refleak_group__stacks(g, REFLEAK_STACK_ALLOC, &n);
	TEST_ASSERT_VAL("stack counts", sc && n == 2 && sc[0].id == id1 && sc[0].count == 4 &&
			sc[1].id == id2 && sc[1].count == 1);
	free(sc);
	sc = refleak_group__stacks(g, REFLEAK_STACK_PUT, &n);
	TEST_ASSERT_VAL("no put stacks", !sc && n == 0);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * A site whose every object leaks never shows a final put of its own: the
 * evidence comes from other objects of the same named slab cache, never
 * from a kmalloc cache, which mixes types.
 */
static int test__refleak_cache_evidence(struct test_suite *test __maybe_unused,
					int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *live, *freed;
	int ret = TEST_FAIL;

	TEST_ASSERT_VAL("engine", rl);
	/* SITE_A: balanced, teaches cache "obj" a refcount at offset 24 */
	ev_alloc(rl, T0, 0x1000, 64, SITE_A, "obj", 0);
	ev_put(rl, T0 + 1 * MS, 0x1000 + 24, 0);
	ev_free(rl, T0 + 2 * MS, 0x1000, "obj", 0);
	/* SITE_B, same cache: one leaked reference, one premature free */
	ev_alloc(rl, T0 + 3 * MS, 0x2000, 64, SITE_B, "obj", 0);
	ev_alloc(rl, T0 + 4 * MS, 0x3000, 64, SITE_B, "obj", 0);
	ev_free(rl, T0 + 5 * MS, 0x3000, "obj", 0);
	/* kmalloc: a balanced site does not vouch for SITE_N's leak */
	ev_alloc(rl, T0 + 6 * MS, 0x4000, 64, SITE_A + 8, NULL, 0);
	ev_put(rl, T0 + 7 * MS, 0x4000 + 24, 0);
	ev_free(rl, T0 + 8 * MS, 0x4000, NULL, 0);
	ev_alloc(rl, T0 + 9 * MS, 0x5000, 64, SITE_N, NULL, 0);
	st = finish(rl, T0 + 5 * SEC);

	live = only_group(rl, REFLEAK_OUTSTANDING);
	freed = only_group(rl, REFLEAK_FREED_WITHOUT_FINAL_PUT);
	if (!live || live->site->call_site != SITE_B || live->count != 1 ||
	    !live->site->by_cache || live->site->ref_offset != 24) {
		pr_debug("cache evidence: outstanding not SITE_B via the cache\n");
		goto out;
	}
	if (!freed || freed->site->call_site != SITE_B || freed->count != 1) {
		pr_debug("cache evidence: freed_without_final_put not SITE_B\n");
		goto out;
	}
	if (nr_suspicious(st) != 2 || st->class_count[REFLEAK_BALANCED] != 2) {
		pr_debug("cache evidence: %" PRIu64 " suspicious, expected 2\n", nr_suspicious(st));
		goto out;
	}
	ret = TEST_OK;
out:
	refleak__delete(rl);
	return ret;
}

#define SITE_L	0xffffffff81004000ULL	/* every object leaks, never a final put */

/*
 * Likely leaks: objects whose counter was born and never reached zero,
 * allocated by a process that exited at least min-age (1 s) before the end,
 * at least min-repeat (2) of them per allocation stack.  Everything else
 * live is only outstanding.
 */
static int test__refleak_likely(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;
	u64 now = T0, end = T0 + 10 * SEC;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	/* pid 100: three objects from stack 1, then exits: a likely leak */
	for (i = 0; i < 3; i++) {
		ev_alloc_pid(rl, now += MS, 0x10000 + i * 0x1000, SITE_L, 1, 100);
		ev_set(rl, now += MS, 0x10000 + i * 0x1000 + 8, 1);
	}
	refleak__exit(rl, 100, now += MS);
	/* pid 200 still runs: in use, outstanding */
	ev_alloc_pid(rl, now += MS, 0x20000, SITE_L, 1, 200);
	ev_set(rl, now += MS, 0x20008, 1);
	/* pid 300 exited, one object from its stack: outstanding (min-repeat) */
	ev_alloc_pid(rl, now += MS, 0x30000, SITE_L, 2, 300);
	ev_set(rl, now += MS, 0x30008, 1);
	refleak__exit(rl, 300, now += MS);
	/* pid 400 exited 0.5 s before the end: not settled, outstanding */
	ev_alloc_pid(rl, now += MS, 0x40000, SITE_L, 3, 400);
	ev_alloc_pid(rl, now += MS, 0x41000, SITE_L, 3, 400);
	ev_set(rl, now += MS, 0x40008, 1);
	ev_set(rl, now += MS, 0x41008, 1);
	refleak__exit(rl, 400, end - 500 * MS);
	/*
	 * pid 600 exited, two objects born at site B, which frees most of
	 * its objects with the counter live (sk_buff-like): outstanding
	 */
	ev_alloc_pid(rl, now += MS, 0x60000, SITE_B, 5, 600);
	ev_set(rl, now += MS, 0x60008, 1);
	ev_free(rl, now += MS, 0x60000, "c", 0);
	ev_alloc_pid(rl, now += MS, 0x61000, SITE_B, 5, 600);
	ev_set(rl, now += MS, 0x61008, 1);
	ev_alloc_pid(rl, now += MS, 0x62000, SITE_B, 5, 600);
	ev_set(rl, now += MS, 0x62008, 1);
	refleak__exit(rl, 600, now += MS);
	/* pid 500 exited, objects never born and the site never refcounted */
	ev_alloc_pid(rl, now += MS, 0x50000, SITE_N, 4, 500);
	ev_alloc_pid(rl, now += MS, 0x51000, SITE_N, 4, 500);
	refleak__exit(rl, 500, now += MS);

	st = finish(rl, end);
	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("likely group at the leaking site", g && g->site->call_site == SITE_L);
	TEST_ASSERT_VAL("three likely leaks", g->count == 3 && g->nr_born == 3);
	TEST_ASSERT_VAL("likely tier", st->tier_count[REFLEAK_TIER_LIKELY] == 3);
	TEST_ASSERT_VAL("no definite", st->tier_count[REFLEAK_TIER_DEFINITE] == 0);
	TEST_ASSERT_VAL("outstanding: in use, single, unsettled, site freeing live counters",
			st->class_count[REFLEAK_OUTSTANDING] == 6);
	TEST_ASSERT_VAL("unborn objects of an unknown site are not judged",
			st->nr_untracked == 2);
	TEST_ASSERT_VAL("exits", st->nr_exits == 5);
	TEST_ASSERT_VAL("site learned from births", g->site->offset_known &&
			g->site->ref_offset == 8);
	refleak__delete(rl);

	/*
	 * A fork hands on what the parent allocated before it (the child's
	 * mm): objects of a parent that exited are not likely while a child
	 * it forked after allocating them runs (round 3: on a pid whose
	 * previous process exited before); a child forked before, or one that
	 * exited too, does not keep them.
	 */
	for (i = 0; i < 4; i++) {
		u64 t = T0;

		rl = new_engine(false);
		TEST_ASSERT_VAL("engine", rl);
		if (i == 1)
			refleak__fork(rl, 100, 101, t);
		if (i == 3)
			refleak__exit(rl, 101, t);
		ev_alloc_pid(rl, t += MS, 0x10000, SITE_L, 1, 100);
		ev_set(rl, t += MS, 0x10008, 1);
		ev_alloc_pid(rl, t += MS, 0x11000, SITE_L, 1, 100);
		ev_set(rl, t += MS, 0x11008, 1);
		if (i != 1)
			refleak__fork(rl, 100, 101, t += MS);
		if (i != 3)
			refleak__fork(rl, 101, 102, t += MS);
		refleak__exit(rl, 100, t += MS);
		if (i == 2) {
			refleak__exit(rl, 101, t += MS);
			refleak__exit(rl, 102, t += MS);
		}
		st = finish(rl, end);
		if (i == 0 || i == 3)
			TEST_ASSERT_VAL("handed on to a running descendant: outstanding",
					!st->class_count[REFLEAK_LIKELY_LEAK] &&
					st->class_count[REFLEAK_OUTSTANDING] == 2);
		else
			TEST_ASSERT_VAL("child forked before, or exited: likely",
					st->class_count[REFLEAK_LIKELY_LEAK] == 2);
		refleak__delete(rl);
	}

	/* --min-repeat 1: the single object of pid 300 becomes likely too */
	{
		struct refleak_config cfg;

		refleak_config__init(&cfg);
		cfg.min_repeat = 1;
		rl = refleak__new(&cfg);
		TEST_ASSERT_VAL("engine", rl);
		ev_alloc_pid(rl, T0, 0x30000, SITE_L, 2, 300);
		ev_set(rl, T0 + MS, 0x30008, 1);
		refleak__exit(rl, 300, T0 + 2 * MS);
		st = finish(rl, end);
		TEST_ASSERT_VAL("min-repeat 1", st->class_count[REFLEAK_LIKELY_LEAK] == 1);
		refleak__delete(rl);
	}
	return TEST_OK;
}

/* an allocation stack of its own: three frames under the allocator */
static u32 alloc_stack(struct refleak *rl, u64 caller)
{
	u64 ips[3] = { 0xffffffff8e000010ULL, caller, 0xffffffff8e100000ULL, };

	return refleak__intern_stack(rl, ips, 3);
}

/* an object born at 'off', put to zero and freed 'life' later */
static void short_life(struct refleak *rl, u64 t, u64 ptr, u64 site, u32 stack, int pid,
		       u64 life)
{
	ev_alloc_pid(rl, t, ptr, site, stack, pid);
	ev_set(rl, t + 1, ptr + 8, 1);
	ev_put(rl, t + life - 1, ptr + 8, 0);
	ev_free(rl, t + life, ptr, site_cache(site), 0);
}

/*
 * siblings_died: a kernel worker (pid 7, never exits) allocates at one stack
 * all along; every second object is freed within 2 ms, the others never
 * reach zero.  Counter-examples: a pool filled at the start, siblings that
 * live long, too few siblings, files whose opener still runs.
 */
static int test__refleak_likely_siblings(struct test_suite *test __maybe_unused,
					 int subtest __maybe_unused)
{
	const struct refleak_stats *st;
	struct refleak_group *g;
	struct refleak *rl;
	u64 now, end;
	u32 stack;
	int i;

	rl = new_engine(true);
	TEST_ASSERT_VAL("engine", rl);
	stack = alloc_stack(rl, SITE_A + 0x10);
	/* addresses going down as time goes on: the live tree is not in time order */
	for (i = 0, now = T0; i < 10; i++, now += 200 * MS) {
		if (i & 1) {
			short_life(rl, now, 0x90000 - i * 0x1000, SITE_A, stack, 7, 2 * MS);
		} else {
			ev_alloc_pid(rl, now, 0x90000 - i * 0x1000, SITE_A, stack, 7);
			ev_set(rl, now + 1, 0x90008 - i * 0x1000, 1);
		}
	}
	end = now + 3 * SEC;
	st = finish(rl, end);
	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("the survivors are likely leaks", g && g->count == 5);
	TEST_ASSERT_VAL("by siblings_died alone",
			g->nr_evidence[REFLEAK_EVIDENCE_SIBLINGS_DIED] == 5 &&
			!g->nr_evidence[REFLEAK_EVIDENCE_OWNER_EXITED] &&
			!g->nr_evidence[REFLEAK_EVIDENCE_COUNTER_LEFT]);
	TEST_ASSERT_VAL("each object says why", g->nr_objects == 5 &&
			g->objects[0].evidence == 1 << REFLEAK_EVIDENCE_SIBLINGS_DIED);
	TEST_ASSERT_VAL("siblings balanced", st->class_count[REFLEAK_BALANCED] == 5);
	refleak__delete(rl);

	/* the same of files: their opener, still running, holds them */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	stack = alloc_stack(rl, SITE_F + 0x10);
	for (i = 0, now = T0; i < 10; i++, now += 200 * MS) {
		if (i & 1) {
			short_life(rl, now, 0x90000 - i * 0x1000, SITE_F, stack, 7, 2 * MS);
		} else {
			ev_alloc_pid(rl, now, 0x90000 - i * 0x1000, SITE_F, stack, 7);
			ev_set(rl, now + 1, 0x90008 - i * 0x1000, 1);
		}
	}
	st = finish(rl, now + 3 * SEC);
	TEST_ASSERT_VAL("files of a running opener are outstanding",
			!st->class_count[REFLEAK_LIKELY_LEAK] &&
			st->class_count[REFLEAK_OUTSTANDING] == 5);
	refleak__delete(rl);

	/* a pool: five objects kept from the start, then siblings come and go */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	stack = alloc_stack(rl, SITE_A + 0x10);
	for (i = 0, now = T0; i < 5; i++, now += MS) {
		ev_alloc_pid(rl, now, 0x10000 + i * 0x1000, SITE_A, stack, 7);
		ev_set(rl, now + 1, 0x10008 + i * 0x1000, 1);
	}
	for (i = 0; i < 20; i++, now += 500 * MS)
		short_life(rl, now, 0x80000 + i * 0x1000, SITE_A, stack, 7, 2 * MS);
	st = finish(rl, now + 3 * SEC);
	TEST_ASSERT_VAL("a pool filled once is outstanding",
			!st->class_count[REFLEAK_LIKELY_LEAK] &&
			st->class_count[REFLEAK_OUTSTANDING] == 5);
	refleak__delete(rl);

	/* kept ones all born before the siblings: they did not come and go together */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	stack = alloc_stack(rl, SITE_A + 0x10);
	for (i = 0, now = T0; i < 5; i++, now += 20 * MS) {
		ev_alloc_pid(rl, now, 0x10000 + i * 0x1000, SITE_A, stack, 7);
		ev_set(rl, now + 1, 0x10008 + i * 0x1000, 1);
	}
	for (i = 0; i < 5; i++, now += 10 * MS)
		short_life(rl, now - 10 * MS, 0x80000 + i * 0x1000, SITE_A, stack, 7, 2 * MS);
	st = finish(rl, now + 3 * SEC);
	TEST_ASSERT_VAL("kept before the siblings: outstanding",
			!st->class_count[REFLEAK_LIKELY_LEAK]);
	refleak__delete(rl);

	/* siblings that live 1 s: survivors of 5 s have not outlived them tenfold */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	stack = alloc_stack(rl, SITE_A + 0x10);
	for (i = 0, now = T0; i < 10; i++, now += 200 * MS) {
		if (i & 1) {
			short_life(rl, now, 0x10000 + i * 0x1000, SITE_A, stack, 7, SEC);
		} else {
			ev_alloc_pid(rl, now, 0x10000 + i * 0x1000, SITE_A, stack, 7);
			ev_set(rl, now + 1, 0x10008 + i * 0x1000, 1);
		}
	}
	st = finish(rl, now + 3 * SEC);
	TEST_ASSERT_VAL("long-lived siblings: outstanding", !st->class_count[REFLEAK_LIKELY_LEAK]);
	refleak__delete(rl);

	/* two kept out of forty: not a share of the stack's objects */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	stack = alloc_stack(rl, SITE_A + 0x10);
	for (i = 0, now = T0; i < 40; i++, now += 50 * MS) {
		if (i == 0 || i == 39) {
			ev_alloc_pid(rl, now, 0x10000 + i * 0x1000, SITE_A, stack, 7);
			ev_set(rl, now + 1, 0x10008 + i * 0x1000, 1);
		} else {
			short_life(rl, now, 0x10000 + i * 0x1000, SITE_A, stack, 7, 2 * MS);
		}
	}
	st = finish(rl, now + 3 * SEC);
	TEST_ASSERT_VAL("two of forty: outstanding", !st->class_count[REFLEAK_LIKELY_LEAK] &&
			st->class_count[REFLEAK_OUTSTANDING] == 2);
	refleak__delete(rl);

	/* one sibling died: below min-repeat, no evidence */
	rl = new_engine(false);
	TEST_ASSERT_VAL("engine", rl);
	stack = alloc_stack(rl, SITE_A + 0x10);
	short_life(rl, T0, 0x90000, SITE_A, stack, 7, 2 * MS);
	for (i = 0, now = T0 + 10 * MS; i < 5; i++, now += 200 * MS) {
		ev_alloc_pid(rl, now, 0x10000 + i * 0x1000, SITE_A, stack, 7);
		ev_set(rl, now + 1, 0x10008 + i * 0x1000, 1);
	}
	st = finish(rl, now + 3 * SEC);
	TEST_ASSERT_VAL("one sibling: outstanding", !st->class_count[REFLEAK_LIKELY_LEAK]);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * record -b: the kernel sums the balanced objects per allocation site and
 * stack, and only the survivors reach the engine.  The siblings_died case
 * above, its five balanced siblings given as their sum: the same verdict.
 * Without the sum, the survivors have no sibling to have outlived.
 */
static int test__refleak_site_sum(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	struct refleak_site_sum sum = {
		.call_site = SITE_A, .cache = "c", .nr_balanced = 5, .nr_died = 5,
		.died_first_ns = T0 + 200 * MS, .died_last_ns = T0 + 1800 * MS,
		.max_life_ns = 2 * MS, .nr_freed_after_zero = 5,
		.max_freed_put_ns = T0 + 1802 * MS, .max_put_free_ns = 1,
		.put_offset = 8, .nr_puts_at_offset = 5,
	};
	const struct refleak_stats *st;
	struct refleak_group *g;
	struct refleak *rl;
	int i, with_sum;
	u64 now;

	for (with_sum = 0; with_sum < 2; with_sum++) {
		rl = new_engine(true);
		TEST_ASSERT_VAL("engine", rl);
		sum.stack = alloc_stack(rl, SITE_A + 0x10);
		if (with_sum)
			TEST_ASSERT_VAL("sum taken", !refleak__site_sum(rl, &sum));
		for (i = 0, now = T0; i < 10; i += 2, now += 400 * MS) {
			ev_alloc_pid(rl, now, 0x90000 - i * 0x1000, SITE_A, sum.stack, 7);
			ev_set(rl, now + 1, 0x90008 - i * 0x1000, 1);
		}
		st = finish(rl, now + 3 * SEC);
		if (!with_sum) {
			TEST_ASSERT_VAL("no sibling: outstanding",
					!st->class_count[REFLEAK_LIKELY_LEAK] &&
					st->class_count[REFLEAK_OUTSTANDING] == 5);
			refleak__delete(rl);
			continue;
		}
		g = only_group(rl, REFLEAK_LIKELY_LEAK);
		TEST_ASSERT_VAL("the survivors are likely leaks", g && g->count == 5);
		TEST_ASSERT_VAL("by siblings_died, from the sum",
				g->nr_evidence[REFLEAK_EVIDENCE_SIBLINGS_DIED] == 5);
		TEST_ASSERT_VAL("the summed siblings are balanced",
				st->class_count[REFLEAK_BALANCED] == 5);
		TEST_ASSERT_VAL("their counter offset is learned",
				g->site->offset_known && g->site->ref_offset == 8);
		refleak__delete(rl);
	}
	return TEST_OK;
}

/*
 * counter_left: objects with a main count (offset 8) and a passive count
 * (offset 16).  Balanced ones take both to zero and are freed; the leaked
 * ones put the main count and keep the passive one.
 */
static int test__refleak_likely_counter_left(struct test_suite *test __maybe_unused,
					     int subtest __maybe_unused)
{
	const struct refleak_stats *st;
	struct refleak_group *g;
	struct refleak *rl;
	int round, i;

	for (round = 0; round < 3; round++) {
		/* 0: as said; 1: no balanced sibling; 2: main count put just before the end */
		u64 now = T0, end = T0 + 10 * SEC;

		rl = new_engine(false);
		TEST_ASSERT_VAL("engine", rl);
		for (i = 0; round != 1 && i < 3; i++) {
			u64 p = 0x10000 + i * 0x1000;

			ev_alloc_pid(rl, now += MS, p, SITE_A, 0, 42);
			ev_set(rl, now += MS, p + 8, 1);
			ev_set(rl, now += MS, p + 16, 1);
			ev_put(rl, now += MS, p + 8, 0);
			ev_put(rl, now += MS, p + 16, 0);
			ev_free(rl, now += MS, p, "c", 0);
		}
		for (i = 0; i < 3; i++) {
			u64 p = 0x40000 + i * 0x1000;

			ev_alloc_pid(rl, now += MS, p, SITE_A, 0, 42);
			ev_set(rl, now += MS, p + 8, 1);
			ev_set(rl, now += MS, p + 16, 1);
		}
		if (round == 2)
			now = end - 100 * MS;
		for (i = 0; i < 3; i++)
			ev_put(rl, now += MS, 0x40008 + i * 0x1000, 0);
		st = finish(rl, end);
		g = only_group(rl, REFLEAK_LIKELY_LEAK);
		if (round == 0) {
			TEST_ASSERT_VAL("passive count kept: likely", g && g->count == 3 &&
					g->nr_evidence[REFLEAK_EVIDENCE_COUNTER_LEFT] == 3 &&
					!g->nr_evidence[REFLEAK_EVIDENCE_OWNER_EXITED]);
			TEST_ASSERT_VAL("not a final put not freed",
					!st->class_count[REFLEAK_FINAL_PUT_NOT_FREED]);
		} else {
			TEST_ASSERT_VAL("no baseline or too recent: outstanding",
					!st->class_count[REFLEAK_LIKELY_LEAK] &&
					st->class_count[REFLEAK_OUTSTANDING] == 3);
		}
		refleak__delete(rl);
	}
	return TEST_OK;
}

/* refcount_t's own checks: definite findings, with or without an allocation */
static int test__refleak_anomalies(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;
	u64 now = T0;

	TEST_ASSERT_VAL("engine", rl);
	/* double put: zero, then a put on zero, then freed */
	ev_alloc(rl, now += MS, 0x10000, 128, SITE_A, "c", 0);
	ev_set(rl, now += MS, 0x10008, 1);
	ev_put(rl, now += MS, 0x10008, 0);
	ev_anomaly(rl, now += 2 * MS, 0x10008, REFLEAK_ANOMALY_SUB_UAF, SITE_A + 1);
	ev_free(rl, now += MS, 0x10000, "c", 0);
	/* put after free: final put, free, then a put on the freed object */
	ev_alloc(rl, now += MS, 0x20000, 128, SITE_A, "c", 0);
	ev_set(rl, now += MS, 0x20008, 1);
	ev_put(rl, now += MS, 0x20008, 0);
	ev_free(rl, now += MS, 0x20000, "c", 0);
	ev_anomaly(rl, now += 3 * MS, 0x20008, REFLEAK_ANOMALY_SUB_UAF, SITE_A + 2);
	/* underflow on a live counter never seen at zero, and dec to zero */
	ev_alloc(rl, now += MS, 0x30000, 128, SITE_B, "c", 0);
	ev_anomaly(rl, now += MS, 0x30008, REFLEAK_ANOMALY_SUB_UAF, SITE_B + 1);
	ev_alloc(rl, now += MS, 0x40000, 128, SITE_B, "c", 0);
	ev_anomaly(rl, now += MS, 0x40008, REFLEAK_ANOMALY_DEC_LEAK, SITE_B + 2);
	/* a saturated counter reports every later put: one finding */
	ev_anomaly(rl, now += MS, 0x40008, REFLEAK_ANOMALY_SUB_UAF, SITE_B + 2);
	/* in no known allocation (static, stack, or older): by caller */
	ev_anomaly(rl, now += MS, 0x90000, REFLEAK_ANOMALY_ADD_UAF, SITE_N);
	ev_anomaly(rl, now += MS, 0x91000, REFLEAK_ANOMALY_ADD_UAF, SITE_N);

	st = finish(rl, T0 + 10 * SEC);
	g = only_group(rl, REFLEAK_DOUBLE_PUT);
	TEST_ASSERT_VAL("double put from the anomaly", g && g->count == 1 &&
			g->max_age_ns == 2 * MS);
	g = only_group(rl, REFLEAK_PUT_AFTER_FREE);
	TEST_ASSERT_VAL("put after free from the anomaly", g && g->count == 1 &&
			g->max_age_ns == 3 * MS);
	TEST_ASSERT_VAL("underflow", st->class_count[REFLEAK_UNDERFLOW] == 1);
	TEST_ASSERT_VAL("dec to zero, once", st->class_count[REFLEAK_DEC_TO_ZERO] == 1);
	g = only_group(rl, REFLEAK_GET_FROM_ZERO);
	TEST_ASSERT_VAL("orphan anomalies grouped by caller", g && g->count == 2 &&
			g->site->no_alloc && g->site->call_site == SITE_N);
	TEST_ASSERT_VAL("all definite", st->tier_count[REFLEAK_TIER_DEFINITE] == 6);
	TEST_ASSERT_VAL("not balanced", st->class_count[REFLEAK_BALANCED] == 0);
	refleak__delete(rl);
	return TEST_OK;
}

/* the group of a class at one allocation site, NULL if none */
static struct refleak_group *group_at(struct refleak *rl, u64 site, enum refleak_class class)
{
	size_t i, nr;
	struct refleak_group **arr = refleak__groups(rl, class, &nr);
	struct refleak_group *g = NULL;

	for (i = 0; i < nr; i++)
		if (arr[i]->site->call_site == site)
			g = arr[i];
	free(arr);
	return g;
}

/*
 * The counter types ref_trace_anomaly and ref_trace_ref name go to the
 * finding: a double put of a file_ref_t and one of a refcount_t at one
 * site, an orphan rcuref_t get on zero, a live object whose get named a
 * percpu_ref; an anomaly whose kernel does not say names none.
 */
static int test__refleak_anomaly_counter(struct test_suite *test __maybe_unused,
					 int subtest __maybe_unused)
{
	struct refleak_anomaly_ev ev = { .type = REFLEAK_ANOMALY_SUB_UAF, .caller = SITE_A + 1, };
	struct refleak_ref_ev ref = { .obj = 0x50008, .old = 1, .delta = 1,
		.counter = REFLEAK_COUNTER_PERCPU_REF, .caller = SITE_A + 2, };
	struct refleak *rl = new_engine(true);
	enum refleak_counter types[] = {
		REFLEAK_COUNTER_FILE_REF, REFLEAK_COUNTER_REFCOUNT, REFLEAK_COUNTER_UNKNOWN,
	};
	struct refleak_group *g;
	u64 now = T0;
	unsigned int i;

	TEST_ASSERT_VAL("engine", rl);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		u64 obj = 0x10000 + i * 0x1000;

		ev_alloc(rl, now += MS, obj, 128, i < 2 ? SITE_A : SITE_B, "c", 0);
		ev_set(rl, now += MS, obj + 8, 1);
		ev_put(rl, now += MS, obj + 8, 0);
		ev.time = now += MS;
		ev.obj = obj + 8;
		ev.counter = types[i];
		TEST_ASSERT_VAL("anomaly taken", !refleak__anomaly(rl, &ev));
		ev_free(rl, now += MS, obj, "c", 0);
	}
	ev_alloc(rl, now += MS, 0x50000, 128, SITE_A, "c", 0);
	ev_set(rl, now += MS, 0x50008, 1);
	ref.time = now += MS;
	TEST_ASSERT_VAL("get taken", !refleak__ref(rl, &ref));
	ev = (struct refleak_anomaly_ev){ .time = now += MS, .obj = 0x90000,
		.type = REFLEAK_ANOMALY_ADD_UAF, .counter = REFLEAK_COUNTER_RCUREF,
		.caller = SITE_N, };
	TEST_ASSERT_VAL("orphan taken", !refleak__anomaly(rl, &ev));
	finish(rl, T0 + 10 * SEC);

	g = group_at(rl, SITE_A, REFLEAK_DOUBLE_PUT);
	TEST_ASSERT_VAL("both types named at one site", g && g->count == 2 &&
			g->counters == (1 << REFLEAK_COUNTER_FILE_REF |
					1 << REFLEAK_COUNTER_REFCOUNT));
	g = group_at(rl, SITE_B, REFLEAK_DOUBLE_PUT);
	TEST_ASSERT_VAL("none when not said", g && g->count == 1 && !g->counters);
	g = only_group(rl, REFLEAK_GET_FROM_ZERO);
	TEST_ASSERT_VAL("an orphan's type", g && g->counters == 1 << REFLEAK_COUNTER_RCUREF);
	g = group_at(rl, SITE_A, REFLEAK_OUTSTANDING) ?: group_at(rl, SITE_A, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("a get's type", g && g->count == 1 &&
			g->counters == 1 << REFLEAK_COUNTER_PERCPU_REF);
	TEST_ASSERT_VAL("names",
			!strcmp(refleak_counter__name(REFLEAK_COUNTER_FILE_REF), "file_ref_t") &&
			refleak_counter__of_kind("file_ref") == REFLEAK_COUNTER_FILE_REF &&
			refleak_counter__of_kind("percpu_ref") == REFLEAK_COUNTER_PERCPU_REF &&
			refleak_counter__of_kind("refcount") == REFLEAK_COUNTER_REFCOUNT &&
			refleak_counter__of_kind("file") == REFLEAK_COUNTER_UNKNOWN &&
			refleak_counter__of_kind("") == REFLEAK_COUNTER_UNKNOWN);
	refleak__delete(rl);
	return TEST_OK;
}

/* births, revivals and retirements of counters */
static int test__refleak_lifecycle(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;
	struct refleak_group *g;
	u64 now = T0;

	TEST_ASSERT_VAL("engine", rl);
	/* revived after its final put (percpu_ref_resurrect): not a double put */
	ev_alloc(rl, now += MS, 0x10000, 128, SITE_A, "c", 0);
	ev_set(rl, now += MS, 0x10008, 1);
	ev_put(rl, now += MS, 0x10008, 0);
	ev_set(rl, now += MS, 0x10008, 1);
	ev_put(rl, now += MS, 0x10008, 0);
	ev_free(rl, now += MS, 0x10000, "c", 0);
	/* retired alive (percpu_ref_exit() on an init failure path), then freed */
	ev_alloc(rl, now += MS, 0x20000, 128, SITE_A, "c", 0);
	ev_set(rl, now += MS, 0x20008, 1);
	ev_set(rl, now += MS, 0x20008, 0);
	ev_free(rl, now += MS, 0x20000, "c", 0);
	/* two counters, one at zero, one still live: in use, not put-not-freed */
	ev_alloc(rl, now += MS, 0x30000, 128, SITE_B, "d", 0);
	ev_set(rl, now += MS, 0x30008, 1);
	ev_set(rl, now += MS, 0x30010, 1);
	ev_put(rl, now += MS, 0x30008, 0);
	/* born at a site never put to zero, freed: possible, listed with --all */
	ev_alloc(rl, now += MS, 0x40000, 128, SITE_N, NULL, 0);
	ev_set(rl, now += MS, 0x40018, 1);
	ev_free(rl, now += MS, 0x40000, NULL, 0);
	/* a counter outside every known allocation */
	ev_set(rl, now += MS, 0x90000, 1);

	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("revived and retired objects are balanced",
			st->class_count[REFLEAK_BALANCED] == 2);
	TEST_ASSERT_VAL("revived", st->nr_revived == 1);
	TEST_ASSERT_VAL("no double put", st->class_count[REFLEAK_DOUBLE_PUT] == 0);
	TEST_ASSERT_VAL("not final_put_not_freed",
			st->class_count[REFLEAK_FINAL_PUT_NOT_FREED] == 0);
	TEST_ASSERT_VAL("in use", st->class_count[REFLEAK_OUTSTANDING] == 1);
	g = only_group(rl, REFLEAK_FREED_WITHOUT_FINAL_PUT);
	TEST_ASSERT_VAL("born, freed, never put", g && g->site->call_site == SITE_N &&
			g->nr_born == 1);
	TEST_ASSERT_VAL("possible tier", st->tier_count[REFLEAK_TIER_POSSIBLE] == 2 &&
			st->tier_count[REFLEAK_TIER_DEFINITE] == 0);
	TEST_ASSERT_VAL("unmatched set", st->nr_unmatched_set == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * final_put_not_freed is definite when the site frees right after the put,
 * never frees after a put, or freed other objects after this put; a site
 * that frees through deferred work (50 ms or more after the put) and freed
 * nothing since the put says "not yet" (the last net namespace waits for
 * the next cleanup_net() run).
 */
#define SITE_C	0xffffffff81005000ULL
#define SITE_D	0xffffffff81006000ULL

static int test__refleak_put_not_freed(struct test_suite *test __maybe_unused,
				       int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(false);
	const struct refleak_stats *st;

	TEST_ASSERT_VAL("engine", rl);
	/* site A: put at 1 s, freed 100 ms later; the next one put, never freed */
	ev_alloc(rl, T0, 0x10000, 128, SITE_A, "a", 0);
	ev_put(rl, T0 + 1 * SEC, 0x10008, 0);
	ev_free(rl, T0 + 1 * SEC + 100 * MS, 0x10000, "a", 0);
	ev_alloc(rl, T0 + 2 * SEC, 0x20000, 128, SITE_A, "a", 0);
	ev_put(rl, T0 + 3 * SEC, 0x20008, 0);
	/* site B: the first put is never freed, a later object is put and freed */
	ev_alloc(rl, T0, 0x30000, 128, SITE_B, "b", 0);
	ev_put(rl, T0 + 1 * SEC, 0x30008, 0);
	ev_alloc(rl, T0 + 2 * SEC, 0x40000, 128, SITE_B, "b", 0);
	ev_put(rl, T0 + 3 * SEC, 0x40008, 0);
	ev_free(rl, T0 + 3 * SEC + 10 * MS, 0x40000, "b", 0);
	/* site N: never frees after a put (every object leaks) */
	ev_alloc(rl, T0, 0x50000, 128, SITE_N, "n", 0);
	ev_put(rl, T0 + 1 * SEC, 0x50008, 0);
	/*
	 * site C frees in batches 200 ms late: after the put at 5 s it frees
	 * an object put before it (the running batch), not one put after
	 * it: not yet.  Site D frees one put after it: definite.
	 */
	ev_alloc(rl, T0 + 4 * SEC, 0x60000, 128, SITE_C, "c2", 0);
	ev_alloc(rl, T0 + 4 * SEC, 0x61000, 128, SITE_C, "c2", 0);
	ev_alloc(rl, T0 + 4 * SEC, 0x70000, 128, SITE_D, "d", 0);
	ev_alloc(rl, T0 + 4 * SEC, 0x71000, 128, SITE_D, "d", 0);
	ev_alloc(rl, T0 + 4 * SEC, 0x72000, 128, SITE_D, "d", 0);
	ev_put(rl, T0 + 4 * SEC + 900 * MS, 0x60008, 0);
	ev_put(rl, T0 + 4 * SEC + 950 * MS, 0x70008, 0);
	ev_put(rl, T0 + 5 * SEC, 0x61008, 0);
	ev_put(rl, T0 + 5 * SEC, 0x71008, 0);
	ev_put(rl, T0 + 5 * SEC + 10 * MS, 0x72008, 0);
	ev_free(rl, T0 + 5 * SEC + 100 * MS, 0x60000, "c2", 0);
	ev_free(rl, T0 + 5 * SEC + 150 * MS, 0x70000, "d", 0);
	ev_free(rl, T0 + 5 * SEC + 200 * MS, 0x72000, "d", 0);

	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("not yet: sites A and C",
			st->class_count[REFLEAK_PUT_NOT_FREED_YET] == 2);
	TEST_ASSERT_VAL("definite: sites B, N and D",
			st->class_count[REFLEAK_FINAL_PUT_NOT_FREED] == 3);
	TEST_ASSERT_VAL("tiers", st->tier_count[REFLEAK_TIER_DEFINITE] == 3 &&
			st->tier_count[REFLEAK_TIER_POSSIBLE] == 2);
	refleak__delete(rl);
	return TEST_OK;
}

static int ev_kfree_rcu(struct refleak *rl, u64 t, u64 ptr)
{
	struct refleak_free_ev ev = { .time = t, .ptr = ptr, .deferred = true, };

	return refleak__free(rl, &ev);
}

/*
 * kfree_rcu(): the object is freed when its owner asks; the free event of
 * the allocator that may come later (or after the recording) is expected.
 */
static int test__refleak_kfree_rcu(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(false);
	const struct refleak_stats *st;

	TEST_ASSERT_VAL("engine", rl);
	/* put, kfree_rcu(), freed by the allocator 30 s later: balanced */
	ev_alloc(rl, T0, 0x10000, 128, SITE_A, "a", 0);
	ev_put(rl, T0 + 1 * SEC, 0x10008, 0);
	ev_kfree_rcu(rl, T0 + 1 * SEC + 1 * MS, 0x10000);
	/* put, kfree_rcu(), never freed in the recording: balanced */
	ev_alloc(rl, T0, 0x20000, 128, SITE_A, "a", 0);
	ev_put(rl, T0 + 2 * SEC, 0x20008, 0);
	ev_kfree_rcu(rl, T0 + 2 * SEC + 1 * MS, 0x20000);
	/* kfree_rcu() of an object allocated before the recording */
	ev_kfree_rcu(rl, T0 + 3 * SEC, 0x30000);
	ev_free(rl, T0 + 31 * SEC, 0x10000, "a", 0);
	ev_free(rl, T0 + 32 * SEC, 0x30000, "a", 0);
	/* a kfree_rcu()'d address reused without a free event, then put twice */
	ev_kfree_rcu(rl, T0 + 33 * SEC, 0x40000);
	ev_alloc(rl, T0 + 34 * SEC, 0x40000, 128, SITE_B, "b", 0);
	ev_put(rl, T0 + 35 * SEC, 0x40008, 0);
	ev_free(rl, T0 + 35 * SEC + 1 * MS, 0x40000, "b", 0);
	ev_put(rl, T0 + 36 * SEC, 0x40008, 0);

	st = finish(rl, T0 + 40 * SEC);
	TEST_ASSERT_VAL("requests", st->nr_rcu_requests == 4 && st->nr_rcu_freed == 2);
	TEST_ASSERT_VAL("no unmatched free", st->nr_unmatched_free == 0);
	TEST_ASSERT_VAL("balanced", st->class_count[REFLEAK_BALANCED] == 2);
	TEST_ASSERT_VAL("not final_put_not_freed",
			st->class_count[REFLEAK_FINAL_PUT_NOT_FREED] == 0 &&
			st->class_count[REFLEAK_PUT_NOT_FREED_YET] == 0);
	TEST_ASSERT_VAL("the reused address is still checked",
			st->class_count[REFLEAK_PUT_AFTER_FREE] == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * The graveyard keeps freed objects for put-after-free detection, bounded
 * by count and by age: an evicted object's late put is only an unmatched
 * put, one still buried is a put after free.
 */
static int test__refleak_graveyard(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	struct refleak_config cfg;
	const struct refleak_stats *st;
	struct refleak *rl;

	/* by count: room for two, the first of three is evicted */
	refleak_config__init(&cfg);
	cfg.graveyard_max = 2;
	rl = refleak__new(&cfg);
	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0 + 1 * MS, 0x1000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 2 * MS, 0x1000, "c", 0);
	ev_alloc(rl, T0 + 3 * MS, 0x2000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 4 * MS, 0x2000, "c", 0);
	ev_alloc(rl, T0 + 5 * MS, 0x3000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 6 * MS, 0x3000, "c", 0);
	ev_put(rl, T0 + 7 * MS, 0x1008, 0);	/* evicted */
	ev_put(rl, T0 + 8 * MS, 0x3008, 0);	/* buried */
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("by count: one put after free",
			st->class_count[REFLEAK_PUT_AFTER_FREE] == 1);
	TEST_ASSERT_VAL("by count: the evicted one is an unmatched put",
			st->nr_unmatched_put == 1);
	refleak__delete(rl);

	/* by age: 1 s */
	refleak_config__init(&cfg);
	cfg.graveyard_ns = 1 * SEC;
	rl = refleak__new(&cfg);
	TEST_ASSERT_VAL("engine", rl);
	ev_alloc(rl, T0, 0x1000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 10 * MS, 0x1000, "c", 0);
	ev_alloc(rl, T0 + 20 * MS, 0x2000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 1500 * MS, 0x2000, "c", 0);
	ev_put(rl, T0 + 2 * SEC, 0x1008, 0);	/* freed 1.99 s ago: gone */
	ev_put(rl, T0 + 2 * SEC, 0x2008, 0);	/* freed 0.5 s ago: buried */
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("by age: one put after free",
			st->class_count[REFLEAK_PUT_AFTER_FREE] == 1);
	TEST_ASSERT_VAL("by age: one unmatched put", st->nr_unmatched_put == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * An unmatched final put (object from before the recording) is matched
 * with the free of its object by the learned offset, but only while it is
 * younger than the graveyard age; an expired one is forgotten.  A free of
 * a refcounted cache with no put seen is judged only once the recording is
 * older than min-age (before that, the put may predate the recording).
 */
static int test__refleak_orphans(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	struct refleak_config cfg;
	const struct refleak_stats *st;
	struct refleak *rl;

	refleak_config__init(&cfg);
	cfg.graveyard_ns = 1 * SEC;
	cfg.min_age_ns = 500 * MS;
	rl = refleak__new(&cfg);
	TEST_ASSERT_VAL("engine", rl);
	/* learn the offset of cache "obj": 24 */
	ev_alloc(rl, T0, 0x1000, 96, SITE_A, "obj", 0);
	ev_put(rl, T0 + 1 * MS, 0x1000 + 24, 0);
	ev_free(rl, T0 + 2 * MS, 0x1000, "obj", 0);
	/* before min-age: a free without a put is not judged */
	ev_free(rl, T0 + 100 * MS, 0xa000, "obj", 0);
	/* orphan put, freed 0.5 s later: matched, inferred balanced */
	ev_put(rl, T0 + 1 * SEC, 0x9000 + 24, 0);
	ev_free(rl, T0 + 1500 * MS, 0x9000, "obj", 0);
	/* orphan put, freed 2 s later: expired, the free is judged alone */
	ev_put(rl, T0 + 2 * SEC, 0x9400 + 24, 0);
	ev_free(rl, T0 + 4 * SEC, 0x9400, "obj", 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("one match", st->nr_inferred_matches == 1);
	TEST_ASSERT_VAL("the early free unmatched", st->nr_unmatched_free == 1);
	TEST_ASSERT_VAL("balanced: the learning object and the matched one",
			st->class_count[REFLEAK_BALANCED] == 2);
	TEST_ASSERT_VAL("the expired one: freed without final put",
			st->class_count[REFLEAK_FREED_WITHOUT_FINAL_PUT] == 1);
	TEST_ASSERT_VAL("inferred", st->nr_inferred == 2);
	refleak__delete(rl);
	return TEST_OK;
}

/* Lost windows reported out of time order still mark what they overlap. */
static int test__refleak_lost_unsorted(struct test_suite *test __maybe_unused,
				       int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(true);
	const struct refleak_stats *st;

	TEST_ASSERT_VAL("engine", rl);
	/* a refcounted site: its objects are judged */
	ev_alloc(rl, T0, 0x8000, 64, SITE_A, "c", 0);
	ev_put(rl, T0 + 1 * MS, 0x8008, 0);
	ev_free(rl, T0 + 2 * MS, 0x8000, "c", 0);
	ev_alloc(rl, T0 + 1 * SEC, 0x1000, 64, SITE_A, "c", 0);	/* spans window 2 */
	ev_alloc(rl, T0 + 5 * SEC, 0x2000, 64, SITE_A, "c", 0);
	ev_free(rl, T0 + 5 * SEC + MS, 0x2000, "c", 0);		/* between both */
	ev_alloc(rl, T0 + 7 * SEC, 0x3000, 64, SITE_A, "c", 0);	/* spans window 1 */
	refleak__lost(rl, T0 + 8 * SEC, T0 + 8 * SEC + MS, 3);		/* window 1 */
	refleak__lost(rl, T0 + 2 * SEC, T0 + 2 * SEC + MS, 4);		/* window 2, late */
	ev_free(rl, T0 + 9 * SEC, 0x3000, "c", 0);
	ev_free(rl, T0 + 9 * SEC, 0x1000, "c", 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("lost counted", st->nr_lost == 7 && st->nr_lost_windows == 2);
	TEST_ASSERT_VAL("two uncertain, the one between certain", st->nr_uncertain == 2);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * Verdicts that rest on an event not happening are not made when events
 * were lost since: a lost free or final put would explain them.
 */
static int test__refleak_lost_absence(struct test_suite *test __maybe_unused,
				      int subtest __maybe_unused)
{
	struct refleak *rl = new_engine(false);
	const struct refleak_stats *st;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	for (i = 0; i < 3; i++) {
		ev_alloc_pid(rl, T0 + i * MS, 0x10000 + i * 0x1000, SITE_L, 1, 100);
		ev_set(rl, T0 + i * MS + 1, 0x10000 + i * 0x1000 + 8, 1);
	}
	ev_alloc(rl, T0 + 10 * MS, 0x20000, 128, SITE_N, "n", 0);
	ev_put(rl, T0 + 11 * MS, 0x20008, 0);
	refleak__exit(rl, 100, T0 + 20 * MS);
	refleak__lost(rl, T0 + 2 * SEC, T0 + 3 * SEC, 1000);
	/* a put after the free, events lost between: the address reused unseen */
	ev_alloc(rl, T0 + 4 * SEC, 0x30000, 128, SITE_A, "c", 0);
	ev_set(rl, T0 + 4 * SEC + 1, 0x30008, 1);
	ev_put(rl, T0 + 4 * SEC + MS, 0x30008, 0);
	ev_free(rl, T0 + 4 * SEC + 2 * MS, 0x30000, "c", 0);
	/* a second final put, events lost between: the counter born again unseen */
	ev_alloc(rl, T0 + 4 * SEC, 0x40000, 128, SITE_A, "c", 0);
	ev_set(rl, T0 + 4 * SEC + 1, 0x40008, 1);
	ev_put(rl, T0 + 4 * SEC + MS, 0x40008, 0);
	refleak__lost(rl, T0 + 4500 * MS, T0 + 4600 * MS, 50);
	ev_put(rl, T0 + 4700 * MS, 0x30008, 0);
	ev_put(rl, T0 + 4700 * MS + 1, 0x40008, 0);
	ev_free(rl, T0 + 4800 * MS, 0x40000, "c", 0);
	/* the same put after free with nothing lost: definite */
	ev_alloc(rl, T0 + 6 * SEC, 0x50000, 128, SITE_A, "c", 0);
	ev_set(rl, T0 + 6 * SEC + 1, 0x50008, 1);
	ev_put(rl, T0 + 6 * SEC + MS, 0x50008, 0);
	ev_free(rl, T0 + 6 * SEC + 2 * MS, 0x50000, "c", 0);
	ev_put(rl, T0 + 6 * SEC + 3 * MS, 0x50008, 0);
	st = finish(rl, T0 + 10 * SEC);
	TEST_ASSERT_VAL("no likely leak", st->class_count[REFLEAK_LIKELY_LEAK] == 0);
	TEST_ASSERT_VAL("outstanding instead", st->class_count[REFLEAK_OUTSTANDING] == 3);
	TEST_ASSERT_VAL("not yet instead of final_put_not_freed",
			st->class_count[REFLEAK_FINAL_PUT_NOT_FREED] == 0 &&
			st->class_count[REFLEAK_PUT_NOT_FREED_YET] == 1);
	TEST_ASSERT_VAL("put after free only where nothing was lost",
			st->class_count[REFLEAK_PUT_AFTER_FREE] == 1);
	TEST_ASSERT_VAL("no double put across lost events",
			st->class_count[REFLEAK_DOUBLE_PUT] == 0);
	TEST_ASSERT_VAL("the later puts unmatched", st->nr_unmatched_put == 2);
	TEST_ASSERT_VAL("uncertain", st->nr_uncertain == 6);
	refleak__delete(rl);
	return TEST_OK;
}

/* ------------------------------------------------------------------ */
/* naming the reference never put (record --refs, refleak-refs.c)      */

/* functions are 4 KiB apart; MACH is the tracing and counting machinery */
#define FN(n)		(0xffffffff82000000ULL + (n) * 0x1000ULL)
#define MACH		0xffffffff8f000000ULL

/* the softirq dispatcher: below it, whatever the interrupt stopped */
#define IRQ_ENTRY	FN(60)
/* fork: what it takes, it takes for the child */
#define COPY_PROCESS	FN(61)
#define DO_SYSCALL	FN(66)
/* the driver model's counting helpers */
#define KOBJECT_GET	FN(62)
#define GET_DEVICE	FN(63)
#define KOBJECT_PUT	FN(64)
#define PUT_DEVICE	FN(65)

/*
 * Function FN(n) is "fn", at its 4 KiB boundary; above MACH is the tracing
 * machinery, IRQ_ENTRY the softirq dispatcher, COPY_PROCESS fork's
 * copy_process(), KOBJECT_GET to PUT_DEVICE the driver model's helpers
 * and DO_SYSCALL the system call dispatch, by the names the engine's rules
 * know them by.
 */
static bool test_symbol(void *ctx __maybe_unused, u64 ip, const char **name, u64 *start)
{
	*start = ip >= MACH ? MACH : ip & ~0xfffULL;
	*name = ip >= MACH ? "perf_trace_run_bpf_submit" :
		*start == IRQ_ENTRY ? "handle_softirqs" :
		*start == COPY_PROCESS ? "copy_process.isra.0" :
		*start == DO_SYSCALL ? "do_syscall_64" :
		*start == KOBJECT_GET ? "kobject_get" : *start == GET_DEVICE ? "get_device" :
		*start == KOBJECT_PUT ? "kobject_put" : *start == PUT_DEVICE ? "put_device" : "fn";
	return true;
}

static struct refleak *new_refs_engine(void)
{
	struct refleak_config cfg;

	refleak_config__init(&cfg);
	cfg.symbol = test_symbol;
	return refleak__new(&cfg);
}

/* a stack from its frames, leaf first, under the machinery frame */
static u32 stack_of(struct refleak *rl, u64 f1, u64 f2, u64 f3, u64 f4)
{
	u64 ips[5] = { MACH + 0x10, f1, f2, f3, f4, };
	u32 nr = 5;

	while (nr > 1 && !ips[nr - 1])
		nr--;
	return refleak__intern_stack(rl, ips, nr);
}

static int ev_set_pid(struct refleak *rl, u64 t, u64 obj, s64 count, u32 stack, int pid)
{
	struct refleak_set_ev ev = {
		.time = t, .obj = obj, .count = count, .stack = stack, .pid = pid,
	};

	return refleak__set(rl, &ev);
}

static int ev_set_at(struct refleak *rl, u64 t, u64 obj, s64 count, u32 stack)
{
	return ev_set_pid(rl, t, obj, count, stack, 0);
}

static int ev_ref_pid(struct refleak *rl, u64 t, u64 obj, s32 old, s32 delta, u32 stack,
		      int pid)
{
	struct refleak_ref_ev ev = {
		.time = t, .obj = obj, .old = old, .delta = delta, .stack = stack, .pid = pid,
	};
	return refleak__ref(rl, &ev);
}

static int ev_ref(struct refleak *rl, u64 t, u64 obj, s32 old, s32 delta, u32 stack)
{
	return ev_ref_pid(rl, t, obj, old, delta, stack, 0);
}

/* the single list of references never put of a group, NULL if none or several */
static struct refleak_unput *only_unput(struct refleak_group *g)
{
	size_t nr;
	struct refleak_unput **arr = g ? refleak_refs__unput(g, &nr) : NULL;
	struct refleak_unput *u = arr && nr == 1 ? arr[0] : NULL;

	free(arr);
	return u;
}

/*
 * The driver's error_path scenario: objects created in one call, used in
 * another (a lookup takes a reference, the user puts it), destroyed in a
 * third, all under one scenario function.  Every second use fails and its
 * error path forgets the put: those objects leak, and the lookup's get is
 * the one reference never put, named with certainty.
 */
/* the stacks of that scenario: creation, the lookup's get, its put, the owner's put */
struct ep_stacks {
	u32 set, get, put, owner;
};

static void ep_stacks(struct refleak *rl, struct ep_stacks *st)
{
	const u64 root = FN(1), ep = FN(2), create = FN(3), use = FN(4), lookup = FN(5),
		  destroy = FN(6);

	st->set = stack_of(rl, create + 0x10, ep + 0x10, root + 0x10, 0);
	st->get = stack_of(rl, lookup + 0x10, use + 0x10, ep + 0x20, root + 0x10);
	st->put = stack_of(rl, use + 0x30, ep + 0x20, root + 0x10, 0);
	st->owner = stack_of(rl, destroy + 0x10, ep + 0x30, root + 0x10, 0);
}

/* the scenario's four leaked objects name @get alone, certain */
static int ep_named(struct refleak *rl, u32 get)
{
	struct refleak_group *g = only_group(rl, REFLEAK_LIKELY_LEAK);
	struct refleak_unput *u;

	TEST_ASSERT_VAL("four likely leaks", g && g->count == 4);
	u = only_unput(g);
	TEST_ASSERT_VAL("one list for the four", u && u->nr_objects == 4);
	TEST_ASSERT_VAL("one reference, certain", u->refs == 1 && u->certain);
	TEST_ASSERT_VAL("the lookup's get, and no other",
			u->nr_stacks == 1 && u->stacks[0].stack == get &&
			u->stacks[0].balance == 1);
	return TEST_OK;
}

static int test__refleak_refs_error_path(struct test_suite *test __maybe_unused,
					 int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), destroy = FN(6);
	struct refleak *rl = new_refs_engine();
	struct refleak_unput *u;
	struct refleak_group *g;
	u32 s_set, s_get, s_put, s_owner, s_owner_last;
	struct ep_stacks st;
	u64 now = T0;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	ep_stacks(rl, &st);
	s_set = st.set;
	s_get = st.get;
	s_put = st.put;
	s_owner = st.owner;
	{
		/* the same put reaching zero: another report call, another machinery frame */
		u64 ips[] = { MACH + 0x80, destroy + 0x18, ep + 0x30, root + 0x10, };

		s_owner_last = refleak__intern_stack(rl, ips, ARRAY_SIZE(ips));
	}
	for (i = 0; i < 8; i++) {
		u64 obj = 0x100000 + i * 0x1000, ref = obj + 8;
		bool fail = i % 2;

		ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, ref, 1, s_set);
		ev_ref(rl, now += MS, ref, 1, 1, s_get);
		if (!fail)
			ev_ref(rl, now += MS, ref, 2, -1, s_put);
		if (fail) {
			ev_ref(rl, now += MS, ref, 2, -1, s_owner);
		} else {
			ev_put(rl, now += MS, ref, s_owner_last);
			ev_free(rl, now += MS, obj, "c", 0);
		}
	}
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("four likely leaks", g && g->count == 4);
	TEST_ASSERT_VAL("site traced", g->site->refs_traced && g->nr_named == 4);
	u = only_unput(g);
	TEST_ASSERT_VAL("one list for the four", u && u->nr_objects == 4);
	TEST_ASSERT_VAL("one reference, certain", u->refs == 1 && u->certain);
	TEST_ASSERT_VAL("the lookup's get, and no other",
			u->nr_stacks == 1 && u->stacks[0].stack == s_get &&
			u->stacks[0].balance == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * A counter used as a lock too: the VMA's vm_refcnt takes a bias of 2^30
 * references to keep readers out, and drops it in the same call.  The
 * scenario above, each object taking and dropping the bias first: the
 * bias is one get and one put, paired at once (one reference at a time,
 * the pairing took minutes an object), and the lookup's get is still the
 * one never put.
 */
static int test__refleak_refs_bias(struct test_suite *test __maybe_unused,
				   int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), use = FN(4), exclude = FN(8);
	const s32 bias = 1 << 30;
	struct refleak *rl = new_refs_engine();
	u32 s_bias, s_unbias;
	struct ep_stacks st;
	u64 now = T0;
	int i, ret;

	TEST_ASSERT_VAL("engine", rl);
	ep_stacks(rl, &st);
	s_bias = stack_of(rl, exclude + 0x10, use + 0x20, ep + 0x20, root + 0x10);
	s_unbias = stack_of(rl, exclude + 0x40, use + 0x20, ep + 0x20, root + 0x10);
	for (i = 0; i < 8; i++) {
		u64 obj = 0x100000 + i * 0x1000, ref = obj + 8;
		bool fail = i % 2;

		ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, ref, 1, st.set);
		ev_ref(rl, now += MS, ref, 1, bias, s_bias);
		ev_ref(rl, now += MS, ref, 1 + bias, -bias, s_unbias);
		ev_ref(rl, now += MS, ref, 1, 1, st.get);
		if (!fail)
			ev_ref(rl, now += MS, ref, 2, -1, st.put);
		if (fail) {
			ev_ref(rl, now += MS, ref, 2, -1, st.owner);
		} else {
			ev_put(rl, now += MS, ref, st.owner);
			ev_free(rl, now += MS, obj, "c", 0);
		}
	}
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	ret = ep_named(rl, st.get);
	refleak__delete(rl);
	return ret;
}

/*
 * Two puts on one counter reported the other way round: a task preempted
 * between its put's atomic and its event reports it after another task's
 * put.  The scenario above, each object holding a second reference for a
 * while: the put that drops it and the put after it come in the wrong
 * order.  Their counts tell the order they happened in, and the lookup's
 * get is still named with certainty.
 */
static int test__refleak_refs_reordered(struct test_suite *test __maybe_unused,
					int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), use = FN(4), hold = FN(9);
	struct refleak *rl = new_refs_engine();
	u32 s_hold, s_drop;
	struct ep_stacks st;
	u64 now = T0;
	int i, ret;

	TEST_ASSERT_VAL("engine", rl);
	ep_stacks(rl, &st);
	s_hold = stack_of(rl, hold + 0x10, use + 0x40, ep + 0x20, root + 0x10);
	s_drop = stack_of(rl, hold + 0x60, use + 0x40, ep + 0x20, root + 0x10);
	for (i = 0; i < 8; i++) {
		u64 obj = 0x100000 + i * 0x1000, ref = obj + 8;
		bool fail = i % 2;

		ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, ref, 1, st.set);
		ev_ref(rl, now += MS, ref, 1, 1, st.get);
		ev_ref(rl, now += MS, ref, 2, 1, s_hold);
		/* the put after the hold's drop, reported first */
		ev_ref(rl, now += MS, ref, 2, -1, fail ? st.owner : st.put);
		ev_ref(rl, now += MS, ref, 3, -1, s_drop);
		if (!fail) {
			ev_put(rl, now += MS, ref, st.owner);
			ev_free(rl, now += MS, obj, "c", 0);
		}
	}
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	ret = ep_named(rl, st.get);
	refleak__delete(rl);
	return ret;
}

/*
 * An object with two counters, a main count and a passive count: the main
 * count reaches zero in every object; in every second one an error path
 * forgets to put the passive count's get, so the object is never freed.
 * The get named is the passive count's, with certainty, not "none left" on
 * the main count's ledger.
 */
static int test__refleak_refs_passive_count(struct test_suite *test __maybe_unused,
					    int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), release = FN(7);
	struct refleak *rl = new_refs_engine();
	struct refleak_unput *u;
	struct refleak_group *g;
	struct ep_stacks st;
	u32 s_main_put;
	u64 now = T0;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	ep_stacks(rl, &st);
	s_main_put = stack_of(rl, release + 0x10, ep + 0x40, root + 0x10, 0);
	for (i = 0; i < 8; i++) {
		u64 obj = 0x100000 + i * 0x1000, main = obj + 8, passive = obj + 16;
		bool fail = i % 2;

		ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, main, 1, st.set);
		ev_set_at(rl, now += MS, passive, 1, st.set);
		ev_ref(rl, now += MS, passive, 1, 1, st.get);
		if (!fail)
			ev_ref(rl, now += MS, passive, 2, -1, st.put);
		ev_put(rl, now += MS, main, s_main_put);
		if (fail) {
			ev_ref(rl, now += MS, passive, 2, -1, st.owner);
		} else {
			ev_put(rl, now += MS, passive, st.owner);
			ev_free(rl, now += MS, obj, "c", 0);
		}
	}
	/* the owner is still running: the evidence is the passive count left */
	finish(rl, now + 5 * SEC);

	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("four likely leaks, by the counter left",
			g && g->count == 4 && g->nr_evidence[REFLEAK_EVIDENCE_COUNTER_LEFT] == 4);
	u = only_unput(g);
	TEST_ASSERT_VAL("one list for the four", u && u->nr_objects == 4);
	TEST_ASSERT_VAL("one reference, certain", u->refs == 1 && u->certain);
	TEST_ASSERT_VAL("the passive count's lookup get, and no other",
			u->nr_stacks == 1 && u->stacks[0].stack == st.get &&
			u->stacks[0].balance == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * An object with two counters that both hold references when it leaks, as
 * a socket's: a second count (offset 16, born first, like sk_wmem_alloc)
 * that only the release of the main count (offset 8, like sk_refcnt) puts
 * for the last time.  In the balanced objects the main count reaches zero
 * first; in every second object an error path forgets to put a get of the
 * main count, so neither reaches zero.  The get named is the main count's
 * forgotten one, not the second count's birth, which is only its
 * consequence.
 */
static int test__refleak_refs_keeping_counter(struct test_suite *test __maybe_unused,
					      int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), alloc_fn = FN(8), release = FN(7);
	struct refleak *rl = new_refs_engine();
	struct refleak_unput *u;
	struct refleak_group *g;
	struct ep_stacks st;
	u32 s_second_set, s_second_put;
	u64 now = T0;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	ep_stacks(rl, &st);
	s_second_set = stack_of(rl, alloc_fn + 0x10, ep + 0x10, root + 0x10, 0);
	s_second_put = stack_of(rl, release + 0x20, ep + 0x30, root + 0x10, 0);
	for (i = 0; i < 8; i++) {
		u64 obj = 0x100000 + i * 0x1000, main = obj + 8, second = obj + 16;
		bool fail = i % 2;

		ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, second, 1, s_second_set);
		ev_set_at(rl, now += MS, main, 1, st.set);
		ev_ref(rl, now += MS, main, 1, 1, st.get);
		if (!fail)
			ev_ref(rl, now += MS, main, 2, -1, st.put);
		if (fail) {
			ev_ref(rl, now += MS, main, 2, -1, st.owner);
		} else {
			ev_put(rl, now += MS, main, st.owner);
			ev_put(rl, now += MS, second, s_second_put);
			ev_free(rl, now += MS, obj, "c", 0);
		}
	}
	finish(rl, now + 5 * SEC);

	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("four likely leaks", g && g->count == 4);
	u = only_unput(g);
	TEST_ASSERT_VAL("one list for the four", u && u->nr_objects == 4);
	TEST_ASSERT_VAL("one reference, certain", u->refs == 1 && u->certain);
	TEST_ASSERT_VAL("the main count's forgotten get, not the second count's birth",
			u->nr_stacks == 1 && u->stacks[0].stack == st.get);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * One leak keeping another alive: the reference the held objects never put
 * was taken inside the function that allocated the holder objects (a
 * constructor storing it), which leak too.  The held group says so; with
 * the get made elsewhere, it does not.
 */
static int test__refleak_refs_held_by(struct test_suite *test __maybe_unused,
				      int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), create = FN(3), put_fn = FN(4), get_fn = FN(5),
		  destroy = FN(6), holder_fn = FN(50), elsewhere = FN(51);
	int round, i;

	for (round = 0; round < 2; round++) {
		struct refleak *rl = new_refs_engine();
		struct refleak_group *held, *holder;
		u32 s_set, s_get, s_put, s_owner;
		u64 now = T0;

		TEST_ASSERT_VAL("engine", rl);
		s_set = stack_of(rl, create + 0x10, ep + 0x10, root + 0x10, 0);
		s_get = stack_of(rl, get_fn + 0x10, (round ? elsewhere : holder_fn) + 0x60,
				 ep + 0x20, root + 0x10);
		s_put = stack_of(rl, put_fn + 0x30, (round ? elsewhere : holder_fn) + 0x70,
				 ep + 0x20, root + 0x10);
		s_owner = stack_of(rl, destroy + 0x10, ep + 0x30, root + 0x10, 0);
		for (i = 0; i < 8; i++) {
			u64 obj = 0x100000 + i * 0x1000, ref = obj + 8;

			ev_alloc_pid(rl, now += MS, obj, SITE_L, 0, 100);
			ev_set_at(rl, now += MS, ref, 1, s_set);
			ev_ref(rl, now += MS, ref, 1, 1, s_get);
			if (i % 2) {
				/* the holder made now keeps the get: neither is freed */
				ev_alloc_pid(rl, now += MS, 0x200000 + i * 0x1000,
					     holder_fn + 0x40, 0, 100);
				ev_set(rl, now += MS, 0x200008 + i * 0x1000, 1);
				ev_ref(rl, now += MS, ref, 2, -1, s_owner);
			} else {
				ev_ref(rl, now += MS, ref, 2, -1, s_put);
				ev_put(rl, now += MS, ref, s_owner);
				ev_free(rl, now += MS, obj, "c", 0);
			}
		}
		refleak__exit(rl, 100, now += MS);
		finish(rl, now + 5 * SEC);

		held = NULL;
		holder = NULL;
		{
			size_t nr, k;
			struct refleak_group **arr = refleak__groups(rl, REFLEAK_LIKELY_LEAK, &nr);

			for (k = 0; arr && k < nr; k++) {
				if (arr[k]->site->call_site == SITE_L)
					held = arr[k];
				else if (arr[k]->site->call_site == holder_fn + 0x40)
					holder = arr[k];
			}
			free(arr);
		}
		TEST_ASSERT_VAL("both leak", held && holder && held->count == 4 &&
				holder->count == 4);
		TEST_ASSERT_VAL("the get named", only_unput(held) && only_unput(held)->certain);
		if (round == 0)
			TEST_ASSERT_VAL("held by the holders", held->held_by == holder &&
					!holder->held_by);
		else
			TEST_ASSERT_VAL("get made elsewhere: not held", !held->held_by);
		refleak__delete(rl);
	}
	return TEST_OK;
}

/*
 * No balanced object to learn from, a put made under no call shared with
 * a get: any of three gets could own it.  The report cannot decide and
 * says so, with every candidate and its balance.
 */
static int test__refleak_refs_ambiguous(struct test_suite *test __maybe_unused,
					int subtest __maybe_unused)
{
	struct refleak *rl = new_refs_engine();
	struct refleak_unput *u;
	struct refleak_group *g;
	u32 s_set, s_a, s_b, s_put;
	u64 now = T0;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	s_set = stack_of(rl, FN(3) + 0x10, FN(10) + 0x10, FN(20), FN(30));
	s_a = stack_of(rl, FN(4) + 0x10, FN(11) + 0x10, FN(21), FN(31));
	s_b = stack_of(rl, FN(5) + 0x10, FN(12) + 0x10, FN(22), FN(32));
	s_put = stack_of(rl, FN(6) + 0x10, FN(13) + 0x10, FN(23), FN(33));
	for (i = 0; i < 2; i++) {
		u64 ref = 0x200008 + i * 0x1000;

		ev_alloc_pid(rl, now += MS, ref - 8, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, ref, 1, s_set);
		ev_ref(rl, now += MS, ref, 1, 1, s_a);
		ev_ref(rl, now += MS, ref, 2, 1, s_b);
		ev_ref(rl, now += MS, ref, 3, -1, s_put);
	}
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	u = only_unput(g);
	TEST_ASSERT_VAL("one list for the two objects", u && u->nr_objects == 2);
	TEST_ASSERT_VAL("two references, not certain", u->refs == 2 && !u->certain);
	TEST_ASSERT_VAL("by the rules, not by missing events", !u->missing);
	TEST_ASSERT_VAL("three candidates", u->nr_stacks == 3);
	TEST_ASSERT_VAL("each could be unput: balances 1, 1 and 1",
			u->stacks[0].balance == 1 && u->stacks[1].balance == 1 &&
			u->stacks[2].balance == 1);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * A get made in an interrupt: its stacks differ below the interrupted
 * code's frames, not in the get's call and two callers.  It is one get:
 * one entry with the balances of its stacks summed, and the objects that
 * kept it are one list, whichever stack each took it at.
 */
static int test__refleak_refs_one_get_many_stacks(struct test_suite *test __maybe_unused,
						  int subtest __maybe_unused)
{
	struct refleak *rl = new_refs_engine();
	struct refleak_unput **arr, *two = NULL, *one = NULL;
	struct refleak_group *g;
	u32 s_set, s_irq[2], s_put;
	u64 now = T0;
	size_t nr = 0, i;

	TEST_ASSERT_VAL("engine", rl);
	s_set = stack_of(rl, FN(3) + 0x10, FN(10) + 0x10, FN(20), FN(30));
	s_irq[0] = stack_of(rl, FN(4) + 0x10, FN(11) + 0x10, FN(21) + 0x10, FN(31));
	s_irq[1] = stack_of(rl, FN(4) + 0x10, FN(11) + 0x10, FN(21) + 0x10, FN(32));
	s_put = stack_of(rl, FN(6) + 0x10, FN(13) + 0x10, FN(23), FN(33));
	/* two objects, each got at one of the stacks; a third at both */
	for (i = 0; i < 3; i++) {
		u64 ref = 0x200008 + i * 0x1000;

		ev_alloc_pid(rl, now += MS, ref - 8, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, ref, 1, s_set);
		ev_ref(rl, now += MS, ref, 1, 1, s_irq[i % 2]);
		if (i == 2)
			ev_ref(rl, now += MS, ref, 2, 1, s_irq[1]);
		ev_ref(rl, now += MS, ref, i == 2 ? 3 : 2, -1, s_put);
	}
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	arr = g ? refleak_refs__unput(g, &nr) : NULL;
	for (i = 0; arr && i < nr; i++) {
		if (arr[i]->nr_objects == 2)
			two = arr[i];
		else
			one = arr[i];
	}
	free(arr);
	TEST_ASSERT_VAL("two lists", nr == 2 && two && one);
	TEST_ASSERT_VAL("the objects with one get: the get and the birth, 1 each",
			two->nr_stacks == 2 && two->stacks[0].balance == 1 &&
			two->stacks[1].balance == 1 && !two->stacks[0].merged &&
			!two->stacks[1].merged);
	TEST_ASSERT_VAL("the object with two: one entry for both stacks, 2",
			one->nr_objects == 1 && one->refs == 2 && one->nr_stacks == 2 &&
			one->stacks[0].balance == 2 && one->stacks[0].merged &&
			(one->stacks[0].stack == s_irq[0] || one->stacks[0].stack == s_irq[1]));
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * References handed over (a get in one function, its put in another) on
 * objects that reach zero: nothing to name.  An object freed with a
 * reference left names what it still held.  A counter whose first event
 * shows references the recording never saw taken names them as stack 0,
 * and a lost window over an object's life makes its list uncertain.
 */
static int test__refleak_refs_handoff(struct test_suite *test __maybe_unused,
				      int subtest __maybe_unused)
{
	struct refleak *rl = new_refs_engine();
	struct refleak_unput *u;
	struct refleak_group *g;
	u32 s_set, s_give, s_take, s_owner;
	u64 now = T0;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	s_set = stack_of(rl, FN(3) + 0x10, FN(10) + 0x10, FN(20), FN(30));
	s_give = stack_of(rl, FN(4) + 0x10, FN(11) + 0x10, FN(21), FN(31));
	s_take = stack_of(rl, FN(5) + 0x10, FN(12) + 0x10, FN(22), FN(32));
	/* the owner's put, under the call that created the object */
	s_owner = stack_of(rl, FN(6) + 0x10, FN(10) + 0x20, FN(20), FN(30));
	for (i = 0; i < 4; i++) {
		u64 obj = 0x300000 + i * 0x1000;

		ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, obj + 8, 1, s_set);
		ev_ref(rl, now += MS, obj + 8, 1, 1, s_give);
		ev_ref(rl, now += MS, obj + 8, 2, -1, s_take);
		ev_put(rl, now += MS, obj + 8, s_owner);
		ev_free(rl, now += MS, obj, "c", 0);
	}
	/* freed with the handed-over reference still held */
	ev_alloc_pid(rl, now += MS, 0x310000, SITE_L, 1, 100);
	ev_set_at(rl, now += MS, 0x310008, 1, s_set);
	ev_ref(rl, now += MS, 0x310008, 1, 1, s_give);
	ev_ref(rl, now += MS, 0x310008, 2, -1, s_owner);
	ev_free(rl, now += MS, 0x310000, "c", 0);
	/* never seen born: its first get finds 3 references */
	ev_alloc_pid(rl, now += MS, 0x320000, SITE_L, 1, 100);
	ev_ref(rl, now += MS, 0x320008, 3, 1, s_give);
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	TEST_ASSERT_VAL("handed over and balanced: nothing named",
			refleak__stats(rl)->class_count[REFLEAK_BALANCED] == 4);
	g = only_group(rl, REFLEAK_FREED_WITHOUT_FINAL_PUT);
	u = only_unput(g);
	TEST_ASSERT_VAL("freed holding the handed-over reference",
			u && u->certain && u->refs == 1 && u->nr_stacks == 1 &&
			u->stacks[0].stack == s_give);
	g = only_group(rl, REFLEAK_OUTSTANDING);
	u = only_unput(g);
	TEST_ASSERT_VAL("references from before the recording: stack 0, uncertain",
			u && !u->certain && u->refs == 4 && u->nr_stacks == 2 &&
			u->stacks[0].stack == 0 && u->stacks[0].balance == 3);
	refleak__delete(rl);

	/* the error path again, with events lost over the leaked object */
	rl = new_refs_engine();
	TEST_ASSERT_VAL("engine", rl);
	ev_alloc_pid(rl, T0, 0x400000, SITE_L, 1, 100);
	ev_set_at(rl, T0 + MS, 0x400008, 1, s_set);
	ev_ref(rl, T0 + 2 * MS, 0x400008, 1, 1, s_give);
	ev_alloc_pid(rl, T0 + 3 * MS, 0x410000, SITE_L, 1, 100);
	ev_set_at(rl, T0 + 4 * MS, 0x410008, 1, s_set);
	ev_ref(rl, T0 + 5 * MS, 0x410008, 1, 1, s_give);
	refleak__lost(rl, T0 + 6 * MS, T0 + 7 * MS, 10);
	refleak__exit(rl, 100, T0 + 8 * MS);
	finish(rl, T0 + 5 * SEC);
	g = only_group(rl, REFLEAK_OUTSTANDING);
	u = only_unput(g);
	TEST_ASSERT_VAL("lost events: the same list, not certain",
			u && !u->certain && u->nr_objects == 2 && u->refs == 2);
	TEST_ASSERT_VAL("because events are missing", u->missing);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * The shape of group_info in the ping-group-info real bug: a syscall
 * creates the object, stores a reference and drops the creator's under
 * the same call (rules 2 and 3 cannot tell which of the two it drops),
 * another syscall takes a reference and puts it before returning, and
 * the release of the store drops the last one from softirq context.  On
 * the error path the second syscall forgets its put.  Rule 4: the
 * balanced objects' open gets (creation and store) and open puts (the
 * drop and the release) are contained in the leaked objects' open ones,
 * and what is left is the second syscall's get: named with certainty.
 * The release runs in a softirq that interrupted a different task each
 * time: its stack is compared down to the softirq's entry only.  With no
 * balanced object, the same leak lists three candidates; a second shape
 * not contained in the leaked objects' changes nothing.
 */
static int test__refleak_refs_balanced_shape(struct test_suite *test __maybe_unused,
					     int subtest __maybe_unused)
{
	const u64 entry = FN(1), sys_a = FN(2), alloc = FN(3), store = FN(4), sys_b = FN(5),
		  use = FN(6), release = FN(8), other = FN(9), stopped = FN(70);
	u32 s_set, s_store, s_drop, s_use, s_use_put, s_other;
	int round, i;

	for (round = 0; round < 3; round++) {
		struct refleak *rl = new_refs_engine();
		struct refleak_unput *u;
		struct refleak_group *g;
		u64 now = T0;

		TEST_ASSERT_VAL("engine", rl);
		s_set = stack_of(rl, alloc + 0x10, sys_a + 0x10, entry + 0x10, 0);
		s_store = stack_of(rl, store + 0x10, sys_a + 0x20, entry + 0x10, 0);
		s_drop = stack_of(rl, sys_a + 0x30, entry + 0x10, 0, 0);
		s_use = stack_of(rl, use + 0x10, sys_b + 0x10, entry + 0x20, 0);
		s_use_put = stack_of(rl, sys_b + 0x30, entry + 0x20, 0, 0);
		s_other = stack_of(rl, other + 0x10, IRQ_ENTRY + 0x20, 0, 0);
		for (i = 0; i < 8; i++) {
			u64 obj = 0x500000 + i * 0x1000, ref = obj + 8;
			bool leak = i % 2;
			/* the release, in a softirq on top of a different task each time */
			u64 ips[] = { MACH + 0x80, release + 0x10, IRQ_ENTRY + 0x10,
				      stopped + i * 0x1000 + 0x10, };
			u32 s_release_last = refleak__intern_stack(rl, ips, ARRAY_SIZE(ips));
			u32 s_release = stack_of(rl, release + 0x10, IRQ_ENTRY + 0x10,
						 stopped + i * 0x1000 + 0x20, entry + 0x30);

			/* round 1: no balanced object to learn from */
			if (round == 1 && !leak)
				continue;
			ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
			ev_set_at(rl, now += MS, ref, 1, s_set);
			ev_ref(rl, now += MS, ref, 1, 1, s_store);
			ev_ref(rl, now += MS, ref, 2, -1, s_drop);
			ev_ref(rl, now += MS, ref, 1, 1, s_use);
			if (!leak)
				ev_ref(rl, now += MS, ref, 2, -1, s_use_put);
			/* round 2: half the balanced objects release elsewhere */
			if (round == 2 && !leak && i % 4 == 2) {
				ev_put(rl, now += MS, ref, s_other);
				ev_free(rl, now += MS, obj, "c", 0);
			} else if (!leak) {
				ev_put(rl, now += MS, ref, s_release_last);
				ev_free(rl, now += MS, obj, "c", 0);
			} else {
				ev_ref(rl, now += MS, ref, 2, -1, s_release);
			}
		}
		refleak__exit(rl, 100, now += MS);
		finish(rl, now + 5 * SEC);

		g = only_group(rl, REFLEAK_LIKELY_LEAK);
		u = only_unput(g);
		TEST_ASSERT_VAL("one list for the four leaks",
				u && u->nr_objects == 4 && u->refs == 1);
		if (round == 0) {
			TEST_ASSERT_VAL("the second syscall's get, certain, and no other",
					u->certain && u->nr_stacks == 1 &&
					u->stacks[0].stack == s_use && u->stacks[0].balance == 1);
		} else if (round == 1) {
			TEST_ASSERT_VAL("no balanced shape: three candidates, not certain",
					!u->certain && u->nr_stacks == 3);
		} else {
			/* {set, store} / {drop, release}, and the same with other */
			TEST_ASSERT_VAL("one shape contained: still certain",
					u->certain && u->nr_stacks == 1 &&
					u->stacks[0].stack == s_use);
		}
		refleak__delete(rl);
	}
	return TEST_OK;
}

/*
 * A leaked object whose counter took no get and no put: its birth is the
 * reference never put, but only a recording known to have followed its
 * cache can say so (refleak__refs_recorded(), from the command line in the
 * header); without that, no event of the cache says it was followed.
 */
static int test__refleak_refs_birth_only(struct test_suite *test __maybe_unused,
					 int subtest __maybe_unused)
{
	struct refleak_group *g;
	struct refleak_unput *u;
	int followed;

	for (followed = 0; followed < 2; followed++) {
		struct refleak *rl = new_refs_engine();
		u32 s_set, s_put;
		u64 now = T0;
		int i;

		TEST_ASSERT_VAL("engine", rl);
		if (followed) {
			TEST_ASSERT_VAL("a name", !refleak__refs_recorded(rl, "x"));
			TEST_ASSERT_VAL("a glob", !refleak__refs_recorded(rl, "[a-c]"));
		}
		s_set = stack_of(rl, FN(3) + 0x10, FN(2) + 0x10, 0, 0);
		s_put = stack_of(rl, FN(7) + 0x10, FN(2) + 0x20, 0, 0);
		for (i = 0; i < 6; i++) {
			u64 obj = 0x100000 + i * 0x1000, ref = obj + 8;

			ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
			ev_set_at(rl, now += MS, ref, 1, s_set);
			if (i % 2)
				continue;
			ev_put(rl, now += MS, ref, s_put);
			ev_free(rl, now += MS, obj, "c", 0);
		}
		refleak__exit(rl, 100, now += MS);
		finish(rl, now + 5 * SEC);

		g = only_group(rl, REFLEAK_LIKELY_LEAK);
		TEST_ASSERT_VAL("three likely leaks", g && g->count == 3);
		TEST_ASSERT_VAL("followed only when the recording says so",
				g->site->refs_traced == followed);
		u = followed ? only_unput(g) : NULL;
		if (followed) {
			TEST_ASSERT_VAL("one list for the three", u && u->nr_objects == 3);
			TEST_ASSERT_VAL("one reference, certain", u->refs == 1 && u->certain);
			TEST_ASSERT_VAL("the birth",
					u->nr_stacks == 1 && u->stacks[0].stack == s_set);
		}
		refleak__delete(rl);
	}
	return TEST_OK;
}

/*
 * A counter its objects are freed holding, as net_device's dev_refcnt:
 * its birth is never put (free_netdev() frees), while the object's other
 * counter (its kobject's) reaches zero.  A lookup's get and put in one
 * call pair by scope; a leaked object also holds the get of a call that
 * forgot its put.  The birth, which every balanced object still held at
 * its free, is no reference never put: the forgotten get is named alone,
 * with certainty, and they are likely leaks: they got the put that was
 * the balanced objects' last, and their process exited (past_last_put).
 * Without balanced objects
 * both are listed, and the objects are only outstanding.
 */
static int test__refleak_refs_held_at_free(struct test_suite *test __maybe_unused,
					   int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), create = FN(3), use = FN(4), lookup = FN(5),
		  sys_c = FN(6), lookup2 = FN(7), destroy = FN(8), kinit = FN(9);
	int round, i;

	for (round = 0; round < 2; round++) {
		struct refleak *rl = new_refs_engine();
		u32 s_birth, s_kbirth, s_get, s_put, s_forgot, s_kput;
		struct refleak_unput *u;
		struct refleak_group *g;
		u64 now = T0;

		TEST_ASSERT_VAL("engine", rl);
		s_birth = stack_of(rl, create + 0x10, ep + 0x10, root + 0x10, 0);
		s_kbirth = stack_of(rl, kinit + 0x10, create + 0x20, ep + 0x10, root + 0x10);
		s_get = stack_of(rl, lookup + 0x10, use + 0x10, ep + 0x20, root + 0x10);
		s_put = stack_of(rl, use + 0x30, ep + 0x20, root + 0x10, 0);
		s_forgot = stack_of(rl, lookup2 + 0x10, sys_c + 0x10, root + 0x20, 0);
		s_kput = stack_of(rl, destroy + 0x10, ep + 0x30, root + 0x10, 0);
		for (i = 0; i < 8; i++) {
			u64 obj = 0x600000 + i * 0x1000, ref = obj + 8, kref = obj + 0x40;
			bool leak = i % 2;

			/* round 1: no balanced object to learn from */
			if (round == 1 && !leak)
				continue;
			ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
			ev_set_pid(rl, now += MS, ref, 1, s_birth, 100);
			ev_set_pid(rl, now += MS, kref, 1, s_kbirth, 100);
			ev_ref_pid(rl, now += MS, ref, 1, 1, s_get, 100);
			ev_ref_pid(rl, now += MS, ref, 2, -1, s_put, 100);
			if (leak)
				ev_ref_pid(rl, now += MS, ref, 1, 1, s_forgot, 100);
			ev_put(rl, now += MS, kref, s_kput);
			if (!leak)
				ev_free(rl, now += MS, obj, "c", 0);
		}
		refleak__exit(rl, 100, now += MS);
		finish(rl, now + 5 * SEC);

		/* past the balanced objects' last put (s_put) only with them */
		g = only_group(rl, round == 0 ? REFLEAK_LIKELY_LEAK : REFLEAK_OUTSTANDING);
		u = only_unput(g);
		TEST_ASSERT_VAL("one list for the four kept", g && g->count == 4 &&
				u && u->nr_objects == 4);
		if (round == 0)
			TEST_ASSERT_VAL("the forgotten get alone, certain",
					u->certain && u->refs == 1 && u->nr_stacks == 1 &&
					u->stacks[0].stack == s_forgot);
		else
			TEST_ASSERT_VAL("nothing learned: the birth listed too",
					u->refs == 2 && u->nr_stacks == 2);
		refleak__delete(rl);
	}
	return TEST_OK;
}

/*
 * past_last_put: balanced objects of a site end with one put (a teardown
 * path's); objects that got it and still hold a reference a call forgot,
 * made by a process that exited since, are likely leaks, though the
 * process that allocated them still runs.  Not when the put also came
 * before the last in one balanced object (a put that may leave holders),
 * not when it came less than min-age before the end, not without gets and
 * puts recorded, not when the process that took the reference left still
 * runs (a descriptor dup() made) and not when it took it for a child it
 * forked.
 */
static int test__refleak_past_last_put(struct test_suite *test __maybe_unused,
				       int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), create = FN(3), lookup = FN(5),
		  sys_c = FN(6), teardown = FN(8), other = FN(9);
	enum {
		PLAIN, NOT_ALWAYS_LAST, TOO_RECENT, NOT_TRACED, TAKER_RUNS, FORKED, NR_ROUNDS
	};
	int round, i;

	for (round = 0; round < NR_ROUNDS; round++) {
		struct refleak *rl = new_refs_engine();
		u32 s_birth, s_forgot, s_end, s_other, s_alloc, s_alloc_leak;
		bool traced = round != NOT_TRACED;
		const struct refleak_stats *stats;
		/* pid 100 allocates them all and never exits; pid 200 exits */
		int taker = round == TAKER_RUNS ? 100 : 200;
		struct refleak_group *g;
		u64 now = T0, end;

		TEST_ASSERT_VAL("engine", rl);
		s_birth = stack_of(rl, create + 0x10, ep + 0x10, root + 0x10, 0);
		s_forgot = round == FORKED ?
			   stack_of(rl, lookup + 0x10, COPY_PROCESS + 0x10, root + 0x20, 0) :
			   stack_of(rl, lookup + 0x10, sys_c + 0x10, root + 0x20, 0);
		s_end = stack_of(rl, teardown + 0x10, ep + 0x30, root + 0x10, 0);
		s_other = stack_of(rl, other + 0x10, ep + 0x40, root + 0x10, 0);
		/* apart, so that no sibling dies young at the leaked ones' stack */
		s_alloc = stack_of(rl, ep + 0x50, root + 0x30, 0, 0);
		s_alloc_leak = stack_of(rl, sys_c + 0x50, root + 0x40, 0, 0);
		for (i = 0; i < 8; i++) {
			u64 obj = 0x700000 + i * 0x1000, ref = obj + 8;
			bool leak = i % 2;

			ev_alloc_pid(rl, now += MS, obj, SITE_L,
				     leak ? s_alloc_leak : s_alloc, 100);
			ev_set_pid(rl, now += MS, ref, 1, s_birth, 100);
			if (!traced) {
				/* no gets and puts recorded: births and final puts only */
				if (!leak) {
					ev_put(rl, now += MS, ref, s_end);
					ev_free(rl, now += MS, obj, "c", 0);
				}
				continue;
			}
			ev_ref_pid(rl, now += MS, ref, 1, 1, s_other, 100);
			if (leak)
				ev_ref_pid(rl, now += MS, ref, 2, 1, s_forgot, taker);
			if (round == NOT_ALWAYS_LAST && i == 0) {
				/* here the teardown put leaves one: not always the last */
				ev_ref_pid(rl, now += MS, ref, 2, -1, s_end, 100);
				ev_put(rl, now += MS, ref, s_other);
			} else if (leak && round == TOO_RECENT) {
				continue;
			} else {
				ev_ref_pid(rl, now += MS, ref, leak ? 3 : 2, -1, s_other, 100);
				if (leak)
					ev_ref_pid(rl, now += MS, ref, 2, -1, s_end, 100);
				else
					ev_put(rl, now += MS, ref, s_end);
			}
			if (!leak)
				ev_free(rl, now += MS, obj, "c", 0);
		}
		refleak__exit(rl, 200, now += MS);
		end = now + 5 * SEC;
		if (round == TOO_RECENT) {
			/* the leaked objects' teardown, less than min-age before the end */
			now = end - REFLEAK_DEFAULT_MIN_AGE_NS / 2;
			for (i = 1; i < 8; i += 2) {
				u64 ref = 0x700000 + i * 0x1000 + 8;

				ev_ref_pid(rl, now += MS, ref, 3, -1, s_other, 100);
				ev_ref_pid(rl, now += MS, ref, 2, -1, s_end, 100);
			}
		}
		stats = finish(rl, end);
		g = only_group(rl, REFLEAK_LIKELY_LEAK);
		if (round == PLAIN) {
			TEST_ASSERT_VAL("likely, past the last put", g && g->count == 4 &&
					g->nr_evidence[REFLEAK_EVIDENCE_PAST_LAST_PUT] == 4);
			TEST_ASSERT_VAL("no other evidence",
					!g->nr_evidence[REFLEAK_EVIDENCE_OWNER_EXITED] &&
					!g->nr_evidence[REFLEAK_EVIDENCE_SIBLINGS_DIED]);
		} else {
			TEST_ASSERT_VAL("not likely",
					!g && stats->class_count[REFLEAK_LIKELY_LEAK] == 0);
			TEST_ASSERT_VAL("outstanding",
					stats->class_count[REFLEAK_OUTSTANDING] == 4);
		}
		refleak__delete(rl);
	}
	return TEST_OK;
}

static int ev_put_pid(struct refleak *rl, u64 t, u64 obj, u32 stack, int pid)
{
	struct refleak_put_ev ev = {
		.time = t, .obj = obj, .stack = stack, .pid = pid,
	};
	return refleak__final_put(rl, &ev);
}

/*
 * call_ref_held: process 100, forked in the recording and running at the
 * end, makes 8 objects; each is born, a command's lookup takes a reference
 * that the command puts before it returns, and the owner's put ends it.
 * In every second object the command forgets its put: that reference is
 * held long after its call, by a process still running, and no other rule
 * holds (the leaked objects have an allocation stack of their own).
 * Counter-examples: one balanced object's lookup put by another process,
 * puts in another call, a leak too recent.
 */
static int test__refleak_call_ref_held(struct test_suite *test __maybe_unused,
				       int subtest __maybe_unused)
{
	const u64 root = DO_SYSCALL, ep = FN(2), create = FN(3), lookup = FN(5),
		  sys_c = FN(6), teardown = FN(8), sys_d = FN(9);
	enum { PLAIN, ELSEWHERE, OTHER_CALL, TOO_RECENT, NR_ROUNDS };
	int round, i;

	for (round = 0; round < NR_ROUNDS; round++) {
		struct refleak *rl = new_refs_engine();
		u32 s_birth, s_get, s_put, s_end, s_alloc, s_alloc_leak;
		const struct refleak_stats *stats;
		struct refleak_group *g;
		u64 now = T0, end;

		TEST_ASSERT_VAL("engine", rl);
		refleak__fork(rl, 1, 100, now);
		/* not under the system call, so that the put pairs with the get alone */
		s_birth = stack_of(rl, create + 0x10, ep + 0x10, FN(1) + 0x10, 0);
		s_get = stack_of(rl, lookup + 0x10, sys_c + 0x10, root + 0x20, 0);
		s_put = round == OTHER_CALL ? stack_of(rl, sys_d + 0x30, root + 0x28, 0, 0) :
					      stack_of(rl, sys_c + 0x30, root + 0x20, 0, 0);
		s_end = stack_of(rl, teardown + 0x10, ep + 0x30, root + 0x10, 0);
		s_alloc = stack_of(rl, ep + 0x50, root + 0x30, 0, 0);
		s_alloc_leak = stack_of(rl, sys_c + 0x50, root + 0x40, 0, 0);
		end = T0 + 5 * SEC;
		for (i = 0; i < 8; i++) {
			u64 obj = 0x800000 + i * 0x1000, ref = obj + 8;
			bool leak = i % 2;

			if (leak && round == TOO_RECENT && i == 7)
				now = end - REFLEAK_DEFAULT_MIN_AGE_NS / 2;
			ev_alloc_pid(rl, now += MS, obj, SITE_L,
				     leak ? s_alloc_leak : s_alloc, 100);
			ev_set_pid(rl, now += MS, ref, 1, s_birth, 100);
			ev_ref_pid(rl, now += MS, ref, 1, 1, s_get, 100);
			if (!leak)
				ev_ref_pid(rl, now += MS, ref, 2, -1, s_put,
					   round == ELSEWHERE && i == 0 ? 300 : 100);
			if (leak) {
				ev_ref_pid(rl, now += MS, ref, 2, -1, s_end, 100);
			} else {
				ev_put_pid(rl, now += MS, ref, s_end, 100);
				ev_free(rl, now += MS, obj, "c", 0);
			}
		}
		stats = finish(rl, end);
		g = only_group(rl, REFLEAK_LIKELY_LEAK);
		if (round == PLAIN) {
			TEST_ASSERT_VAL("likely, a reference its call puts", g && g->count == 4 &&
					g->nr_evidence[REFLEAK_EVIDENCE_CALL_REF_HELD] == 4);
			TEST_ASSERT_VAL("no other evidence",
					!g->nr_evidence[REFLEAK_EVIDENCE_OWNER_EXITED] &&
					!g->nr_evidence[REFLEAK_EVIDENCE_SIBLINGS_DIED] &&
					!g->nr_evidence[REFLEAK_EVIDENCE_PAST_LAST_PUT]);
			TEST_ASSERT_VAL("the lookup's get named", ep_named(rl, s_get) == TEST_OK);
		} else if (round == TOO_RECENT) {
			TEST_ASSERT_VAL("the three older ones only", g && g->count == 3);
		} else {
			TEST_ASSERT_VAL("not likely",
					!g && stats->class_count[REFLEAK_LIKELY_LEAK] == 0);
			TEST_ASSERT_VAL("outstanding",
					stats->class_count[REFLEAK_OUTSTANDING] == 4);
		}
		refleak__delete(rl);
	}
	return TEST_OK;
}

/*
 * Held by running processes: process 100, forked in the recording and
 * running at the end, opens an object every 200 ms and closes every
 * second one 2 ms later; the others it keeps.  They outlive their
 * siblings and keep accumulating (siblings_died), but what they hold,
 * their birth, is what their siblings' opener put itself: held, not
 * leaked -- with or without their gets and puts recorded.  Counter-
 * examples, where siblings_died stands: the siblings' final put in an
 * interrupt, or by another process; the opener a kernel thread.
 */
static int test__refleak_held_by_running(struct test_suite *test __maybe_unused,
					 int subtest __maybe_unused)
{
	const u64 root = DO_SYSCALL, sys_open = FN(2), sys_close = FN(3), alloc = FN(4),
		  close = FN(5);
	enum { HELD, TRACED, PUT_IN_IRQ, PUT_BY_OTHER, KTHREAD, NR_ROUNDS };
	int round, i;

	for (round = 0; round < NR_ROUNDS; round++) {
		struct refleak *rl = new_refs_engine();
		bool held = round == HELD || round == TRACED;
		const struct refleak_stats *stats;
		u32 s_alloc, s_birth, s_close;
		struct refleak_group *g;
		u64 now;

		TEST_ASSERT_VAL("engine", rl);
		if (round == TRACED)
			TEST_ASSERT_VAL("traced", !refleak__refs_recorded(rl, "c"));
		refleak__fork(rl, round == KTHREAD ? 2 : 1, 100, T0 - SEC);
		s_alloc = stack_of(rl, alloc + 0x10, sys_open + 0x10, root + 0x10, 0);
		s_birth = stack_of(rl, alloc + 0x20, sys_open + 0x10, root + 0x10, 0);
		s_close = round == PUT_IN_IRQ ?
			  stack_of(rl, close + 0x10, IRQ_ENTRY + 0x10, root + 0x20, 0) :
			  stack_of(rl, close + 0x10, sys_close + 0x10, root + 0x20, 0);
		for (i = 0, now = T0; i < 10; i++, now += 200 * MS) {
			u64 obj = 0x900000 - i * 0x1000;

			ev_alloc_pid(rl, now, obj, SITE_L, s_alloc, 100);
			ev_set_pid(rl, now + 1, obj + 8, 1, s_birth, 100);
			if (!(i & 1))
				continue;
			ev_put_pid(rl, now + MS, obj + 8, s_close,
				   round == PUT_BY_OTHER ? 300 : 100);
			ev_free(rl, now + 2 * MS, obj, "c", 0);
		}
		stats = finish(rl, now + 3 * SEC);
		g = only_group(rl, REFLEAK_LIKELY_LEAK);
		if (held) {
			TEST_ASSERT_VAL("not likely", !g);
			TEST_ASSERT_VAL("held by their opener",
					stats->class_count[REFLEAK_OUTSTANDING] == 5 &&
					stats->nr_held_by_running == 5);
		} else {
			TEST_ASSERT_VAL("likely by siblings_died", g && g->count == 5 &&
					g->nr_evidence[REFLEAK_EVIDENCE_SIBLINGS_DIED] == 5);
			TEST_ASSERT_VAL("none held", !stats->nr_held_by_running);
		}
		refleak__delete(rl);
	}
	return TEST_OK;
}

/*
 * A struct device's gets and puts go through kobject_get() and
 * get_device() (kobject_put(), put_device()): what took or dropped a
 * reference is their caller.  A command's lookup and its put pair by the
 * call they share below the helpers; what is left, the birth and a
 * registration's get, is named with certainty.  Taken for the users, the
 * helpers hide the command's scope: the three gets would be candidates.
 */
static int test__refleak_refs_device_helpers(struct test_suite *test __maybe_unused,
					     int subtest __maybe_unused)
{
	const u64 root = FN(1), ep = FN(2), create = FN(3), cmd = FN(4), find = FN(5),
		  reg = FN(7), drop = FN(8);
	const u64 get[] = { MACH + 0x10, KOBJECT_GET + 0x10, GET_DEVICE + 0x10, find + 0x10,
			    cmd + 0x10, root + 0x10 };
	const u64 put[] = { MACH + 0x10, KOBJECT_PUT + 0x10, PUT_DEVICE + 0x10, drop + 0x10,
			    cmd + 0x20, root + 0x10 };
	const u64 regd[] = { MACH + 0x10, KOBJECT_GET + 0x10, GET_DEVICE + 0x10, find + 0x10,
			     reg + 0x10, ep + 0x20, root + 0x20 };
	struct refleak *rl = new_refs_engine();
	u32 s_birth, s_get, s_put, s_reg, i;
	struct refleak_unput *u;
	struct refleak_group *g;
	u64 now = T0;

	TEST_ASSERT_VAL("engine", rl);
	s_birth = stack_of(rl, create + 0x10, ep + 0x10, root + 0x10, 0);
	s_get = refleak__intern_stack(rl, get, ARRAY_SIZE(get));
	s_put = refleak__intern_stack(rl, put, ARRAY_SIZE(put));
	s_reg = refleak__intern_stack(rl, regd, ARRAY_SIZE(regd));
	for (i = 0; i < 3; i++) {
		u64 obj = 0x800000 + i * 0x1000, ref = obj + 0x50;

		ev_alloc_pid(rl, now += MS, obj, SITE_L, 1, 100);
		ev_set_pid(rl, now += MS, ref, 1, s_birth, 100);
		ev_ref_pid(rl, now += MS, ref, 1, 1, s_reg, 100);
		ev_ref_pid(rl, now += MS, ref, 2, 1, s_get, 100);
		ev_ref_pid(rl, now += MS, ref, 3, -1, s_put, 100);
	}
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	u = only_unput(g);
	TEST_ASSERT_VAL("one list for the three", g && g->count == 3 && u && u->nr_objects == 3);
	TEST_ASSERT_VAL("the birth and the registration's get, certain",
			u->certain && u->refs == 2 && u->nr_stacks == 2 &&
			u->stacks[0].stack != s_get && u->stacks[1].stack != s_get);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * Objects allocated in softirq (a packet received from a timer): the part
 * of their allocation stacks below the softirq's entry is whatever it
 * stopped, a different call each time, and their path is one.  Every
 * second object dies within 2 ms, the others never reach zero: siblings
 * died, counted on the path (no object's own stack has a sibling).
 */
static int test__refleak_likely_softirq(struct test_suite *test __maybe_unused,
					int subtest __maybe_unused)
{
	struct refleak *rl = new_refs_engine();
	struct refleak_group *g;
	u64 now;
	u32 stack;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	for (i = 0, now = T0; i < 10; i++, now += 200 * MS) {
		stack = stack_of(rl, FN(1) + 0x10, FN(2) + 0x20, IRQ_ENTRY + 0x30,
				 FN(80 + i) + 0x40);
		if (i & 1) {
			short_life(rl, now, 0x90000 - i * 0x1000, SITE_A, stack, 0, 2 * MS);
		} else {
			ev_alloc_pid(rl, now, 0x90000 - i * 0x1000, SITE_A, stack, 0);
			ev_set(rl, now + 1, 0x90008 - i * 0x1000, 1);
		}
	}
	finish(rl, now + 3 * SEC);
	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("the survivors are likely leaks, whatever the softirq stopped",
			g && g->count == 5 &&
			g->nr_evidence[REFLEAK_EVIDENCE_SIBLINGS_DIED] == 5);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * Objects allocated in softirqs that a process's own calls ran (a TIME_WAIT
 * socket made when its send took in the peer's FIN): the process exits,
 * and they are no owner_exited leak.  Allocated in its calls, they are.
 */
static int test__refleak_owner_in_softirq(struct test_suite *test __maybe_unused,
					  int subtest __maybe_unused)
{
	struct refleak *rl = new_refs_engine();
	const struct refleak_stats *st;
	struct refleak_group *g;
	u64 now = T0;
	u32 irq, call;
	int i;

	TEST_ASSERT_VAL("engine", rl);
	irq = stack_of(rl, FN(1) + 0x10, IRQ_ENTRY + 0x30, FN(2) + 0x20, DO_SYSCALL + 0x10);
	call = stack_of(rl, FN(1) + 0x10, FN(3) + 0x20, FN(2) + 0x20, DO_SYSCALL + 0x10);
	for (i = 0; i < 8; i++) {
		ev_alloc_pid(rl, now += MS, 0x90000 + i * 0x1000, SITE_A, i < 4 ? irq : call, 100);
		ev_set(rl, now += MS, 0x90008 + i * 0x1000, 1);
	}
	refleak__exit(rl, 100, now += MS);
	st = finish(rl, now + 5 * SEC);
	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("the four made in its calls are likely, by owner_exited",
			g && g->count == 4 && g->nr_evidence[REFLEAK_EVIDENCE_OWNER_EXITED] == 4);
	TEST_ASSERT_VAL("the four made in its softirqs are outstanding",
			st->class_count[REFLEAK_OUTSTANDING] == 4);
	refleak__delete(rl);
	return TEST_OK;
}

/*
 * An object looked up on every packet a softirq receives: a get and its
 * put in the same call each time, 70 of them under softirqs that stopped
 * 70 different calls.  They are one get as the rules see them, not 70
 * (more than a pairing follows), and the one reference never put, taken
 * in a process, is named with certainty.
 */
#define RL_IRQ_LOOKUPS	70

static int test__refleak_refs_softirq_gets(struct test_suite *test __maybe_unused,
					   int subtest __maybe_unused)
{
	struct refleak *rl = new_refs_engine();
	struct refleak_unput *u;
	struct refleak_group *g;
	u32 s_set, s_leak, s_owner, s_get, s_put;
	u64 now = T0;
	int i, k;

	TEST_ASSERT_VAL("engine", rl);
	s_set = stack_of(rl, FN(3) + 0x10, FN(10) + 0x10, FN(20), FN(30));
	s_leak = stack_of(rl, FN(7) + 0x10, FN(12) + 0x10, FN(22), FN(30));
	/* the owner's put, in the call that made it: the birth's */
	s_owner = stack_of(rl, FN(6) + 0x10, FN(10) + 0x20, FN(20), FN(30));
	for (i = 0; i < 3; i++) {
		u64 ref = 0x300008 + i * 0x1000;

		ev_alloc_pid(rl, now += MS, ref - 8, SITE_L, 1, 100);
		ev_set_at(rl, now += MS, ref, 1, s_set);
		for (k = 0; k < RL_IRQ_LOOKUPS; k++) {
			s_get = stack_of(rl, FN(4) + 0x10, FN(11) + 0x10, IRQ_ENTRY + 0x10,
					 FN(100 + k) + 0x10);
			s_put = stack_of(rl, FN(5) + 0x10, FN(11) + 0x20, IRQ_ENTRY + 0x10,
					 FN(100 + k) + 0x10);
			ev_ref(rl, now += 1000, ref, 1, 1, s_get);
			ev_ref(rl, now += 1000, ref, 2, -1, s_put);
		}
		ev_ref_pid(rl, now += MS, ref, 1, 1, s_leak, 100);
		ev_ref_pid(rl, now += MS, ref, 2, -1, s_owner, 100);
	}
	refleak__exit(rl, 100, now += MS);
	finish(rl, now + 5 * SEC);

	g = only_group(rl, REFLEAK_LIKELY_LEAK);
	TEST_ASSERT_VAL("three likely leaks", g && g->count == 3);
	u = only_unput(g);
	TEST_ASSERT_VAL("one list for the three", u && u->nr_objects == 3);
	TEST_ASSERT_VAL("one reference, certain", u->refs == 1 && u->certain);
	TEST_ASSERT_VAL("the process's get, and no other",
			u->nr_stacks == 1 && u->stacks[0].stack == s_leak);
	refleak__delete(rl);
	return TEST_OK;
}

static struct test_case tests__refleak[] = {
	TEST_CASE("balanced object", refleak_balanced),
	TEST_CASE("one object per class", refleak_classes),
	TEST_CASE("address reuse", refleak_reuse),
	TEST_CASE("cross-CPU ordering via ordered events", refleak_ordering),
	TEST_CASE("objects allocated before the recording", refleak_preexisting),
	TEST_CASE("refcount offsets", refleak_offsets),
	TEST_CASE("refcount evidence from the slab cache", refleak_cache_evidence),
	TEST_CASE("several refcounts in one object", refleak_several_refs),
	TEST_CASE("NULL and ERR_PTR allocations", refleak_null),
	TEST_CASE("lost events make verdicts uncertain", refleak_lost),
	TEST_CASE("interned stacks, bounded object list", refleak_stacks),
	TEST_CASE("likely leaks: born, never put, process gone, repeated", refleak_likely),
	TEST_CASE("likely leaks: siblings died young, survivors accumulating",
		  refleak_likely_siblings),
	TEST_CASE("likely leaks: one counter at zero, another never", refleak_likely_counter_left),
	TEST_CASE("record -b: balanced objects given as their site's sum", refleak_site_sum),
	TEST_CASE("anomalies are definite, with or without an allocation", refleak_anomalies),
	TEST_CASE("counter types named by anomalies, gets and puts", refleak_anomaly_counter),
	TEST_CASE("counters born, revived, retired", refleak_lifecycle),
	TEST_CASE("final put not freed: definite, or not yet", refleak_put_not_freed),
	TEST_CASE("lost events: no verdict resting on a missing event", refleak_lost_absence),
	TEST_CASE("kfree_rcu: freed when asked, the late free expected", refleak_kfree_rcu),
	TEST_CASE("graveyard eviction by count and by age", refleak_graveyard),
	TEST_CASE("unmatched puts: matched by offset, expired, min-age", refleak_orphans),
	TEST_CASE("lost windows out of time order", refleak_lost_unsorted),
	TEST_CASE("refs: the get an error path never put", refleak_refs_error_path),
	TEST_CASE("refs: a bias of 2^30 references is one get and one put", refleak_refs_bias),
	TEST_CASE("refs: two puts reported the other way round", refleak_refs_reordered),
	TEST_CASE("refs: several gets could own a put", refleak_refs_ambiguous),
	TEST_CASE("refs: one get at several stacks below its callers",
		  refleak_refs_one_get_many_stacks),
	TEST_CASE("refs: handed over, freed holding, before the recording, lost",
		  refleak_refs_handoff),
	TEST_CASE("refs: a leak whose objects hold another's references is its root",
		  refleak_refs_held_by),
	TEST_CASE("refs: the passive count's get, when the main count reached zero",
		  refleak_refs_passive_count),
	TEST_CASE("refs: of two counters held, the one that keeps the other",
		  refleak_refs_keeping_counter),
	TEST_CASE("refs: the balanced objects' shape names the error path's get",
		  refleak_refs_balanced_shape),
	TEST_CASE("refs: a counter never got nor put, in a cache the recording followed",
		  refleak_refs_birth_only),
	TEST_CASE("refs: what balanced objects hold at their free is not a leak",
		  refleak_refs_held_at_free),
	TEST_CASE("likely leaks: a reference its call always puts, held", refleak_call_ref_held),
	TEST_CASE("held by running processes: not judged by lifetime", refleak_held_by_running),
	TEST_CASE("likely leaks: past the put that ended the site's balanced objects",
		  refleak_past_last_put),
	TEST_CASE("refs: the driver model's helpers are not the users of a reference",
		  refleak_refs_device_helpers),
	TEST_CASE("likely leaks: siblings allocated in softirqs that stopped other code",
		  refleak_likely_softirq),
	TEST_CASE("refs: gets in softirqs that stopped other code are one get",
		  refleak_refs_softirq_gets),
	TEST_CASE("owner_exited: not the owner of what its softirqs allocated",
		  refleak_owner_in_softirq),
	{ .name = NULL, }
};

struct test_suite suite__refleak = {
	.desc = "refleak correlation engine",
	.test_cases = tests__refleak,
};
