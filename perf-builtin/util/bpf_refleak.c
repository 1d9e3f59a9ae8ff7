// SPDX-License-Identifier: GPL-2.0
/*
 * perf refleak record -b: load refleak.bpf.c when perf record starts, and
 * at its end write what the programs kept as the samples of the events
 * the plain recording takes, so that 'perf refleak report' reads both the
 * same way.  perf refleak top: load them alone and read the objects they
 * follow now.
 *
 * Every sample is the record the kernel would have written for the
 * event: its raw data laid out from the event's own format (the recording
 * carries the formats), stamped with the event's time (perf record runs
 * with the monotonic clock, bpf_ktime_get_ns()'s) and its kernel stack.
 * The sums of the balanced objects, what the programs missed and the end
 * of the recording go as samples of the REFLEAK_BPF_EVENT bpf-output event.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/err.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <event-parse.h>

#include "util/bpf_refleak.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/hashmap.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/parse-events.h"
#include "util/refleak-events.h"
#include "util/perf-hooks.h"
#include "util/sample.h"
#include "util/session.h"
#include "util/symbol.h"
#include "util/synthetic-events.h"
#include "util/tracepoint.h"

#include "util/bpf_skel/refleak_data.h"
#include "util/bpf_skel/refleak.skel.h"

#define RL_MAX_STACK	RL_BPF_MAX_STACK

static struct refleak_bpf *skel;
/* when the programs began to count, CLOCK_MONOTONIC */
static u64 rl_counting_ns;
static int rl_nr_progs;		/* loaded */
static double rl_ready_s;	/* seconds from loading to counting */

struct rl_counts {
	u64	seen[RL_BPF_NR_EV_KINDS];
	u64	taken[RL_BPF_NR_EV_KINDS];
	/* ... of them, not seen by the first program, nested in itself */
	u64	unseen[RL_BPF_NR_EV_KINDS];
};

/* the counts once every program runs (rl_events_missed()) */
static struct rl_counts rl_start;

/* the tracepoint of an event the programs take as @kind (refleak-events.c), as perf names it */
static const char *rl_ev_name(int kind)
{
	return refleak_event__of_bpf(kind)->name;
}

/*
 * Program @k of the event of @kind: rl_<name>_<k>, <name> the
 * tracepoint's, k from 0 to RL_BPF_LEVELS - 1 in the order they run
 * (refleak.bpf.c's RL_PROGS())
 */
static struct bpf_program *rl_prog(int kind, int k)
{
	char name[64];

	snprintf(name, sizeof(name), "rl_%s_%d", strchr(rl_ev_name(kind), ':') + 1, k);
	return bpf_object__find_program_by_name(skel->obj, name);
}

/*
 * The kernel's HZ: a coarse clock advances by a tick, and says so as its
 * resolution.  1000, the most, if it does not.
 */
static u64 rl_hz(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) || res.tv_sec || !res.tv_nsec)
		return 1000;
	return DIV_ROUND_UP(NSEC_PER_SEC, res.tv_nsec);
}

/* the events in flight when the programs start or stop marking them land */
static void rl_settle(void)
{
	usleep(50 * 1000);
}

/*
 * The events seen and taken, from every CPU, and the events the first
 * program of an event did not see (nested in itself), which the kernel
 * counts while the programs are attached, enabled or not: @unseen reads
 * those too.
 */
static void rl_read_counts(struct rl_counts *n, bool unseen)
{
	int nr_cpus = libbpf_num_possible_cpus(), cpu, i;
	struct rl_cpu *cpus;
	u32 zero = 0;

	memset(n->seen, 0, sizeof(n->seen));
	memset(n->taken, 0, sizeof(n->taken));
	cpus = nr_cpus > 0 ? calloc(nr_cpus, sizeof(*cpus)) : NULL;
	if (cpus && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.cpu_state), &zero, cpus)) {
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			for (i = 0; i < RL_BPF_NR_EV_KINDS; i++) {
				n->seen[i] += cpus[cpu].seen[i];
				n->taken[i] += cpus[cpu].handled[i];
			}
		}
	}
	free(cpus);
	for (i = 0; unseen && i < RL_BPF_NR_EV_KINDS; i++) {
		struct bpf_prog_info info = {};
		u32 len = sizeof(info);
		struct bpf_program *first = rl_prog(i, 0);
		int fd = first ? bpf_program__fd(first) : -1;

		n->unseen[i] = 0;
		if (fd >= 0 && !bpf_prog_get_info_by_fd(fd, &info, &len))
			n->unseen[i] = info.recursion_misses;
	}
}

static u64 rl_monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * NSEC_PER_SEC + t.tv_nsec;
}

static double rl_seconds_since(u64 start_ns)
{
	return (double)(rl_monotonic_ns() - start_ns) / NSEC_PER_SEC;
}

/*
 * -v: the verifier's own account of each program (BPF_LOG_STATS: a few
 * lines, no instruction log), where the time to start goes.  A log too
 * small for them would fail the load (-ENOSPC): they take about 200 bytes.
 */
#define RL_VERIFIER_STATS	4	/* BPF_LOG_STATS, kernel/bpf/log.c */
#define RL_VERIFIER_LOG_SIZE	1024

static char *rl_verifier_logs;

static void rl_verifier_stats_ask(void)
{
	struct bpf_program *prog;
	int i = 0, n = 0;

	if (verbose <= 0)
		return;
	bpf_object__for_each_program(prog, skel->obj)
		n++;
	rl_verifier_logs = calloc(n, RL_VERIFIER_LOG_SIZE);
	if (!rl_verifier_logs)
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		bpf_program__set_log_level(prog, RL_VERIFIER_STATS);
		bpf_program__set_log_buf(prog, rl_verifier_logs + i++ * RL_VERIFIER_LOG_SIZE,
					 RL_VERIFIER_LOG_SIZE);
	}
}

static void rl_verifier_stats_show(void)
{
	unsigned long long usec, sum_usec = 0, insns, sum_insns = 0;
	struct bpf_program *prog;
	const char *log, *at;
	int i = 0;

	if (!rl_verifier_logs)
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		log = rl_verifier_logs + i++ * RL_VERIFIER_LOG_SIZE;
		if (!bpf_program__autoload(prog))
			continue;
		usec = 0;
		insns = 0;
		at = strstr(log, "verification time ");
		if (at)
			usec = strtoull(at + strlen("verification time "), NULL, 10);
		at = strstr(log, "processed ");
		if (at)
			insns = strtoull(at + strlen("processed "), NULL, 10);
		sum_usec += usec;
		sum_insns += insns;
		pr_debug("perf refleak: %s: %zu instructions, %llu verified in %.3f s\n",
			 bpf_program__name(prog), bpf_program__insn_cnt(prog), insns, usec / 1e6);
	}
	pr_debug("perf refleak: verified %llu instructions in %.3f s\n", sum_insns, sum_usec / 1e6);
	zfree(&rl_verifier_logs);
}

/*
 * record -b --refs: the globs of ref_trace_ref's filter ('cache ~ "<glob>"',
 * one per --refs cache), which the programs match the event's cache name
 * against; "*" (no --refs) is every cache, not narrowed.  0 or -1.
 */
struct rl_refs_globs {
	char	glob[RL_BPF_REFS_GLOBS][RL_BPF_CACHE_NAME];
	u32	nr;
	bool	narrowed;	/* false: every cache */
};

static int rl_refs_globs_parse(const char *filter, struct rl_refs_globs *g)
{
	static const char op[] = "cache ~ \"";
	const char *p, *end;

	for (p = filter; p && (p = strstr(p, op)) != NULL; p = end + 1) {
		p += strlen(op);
		end = strchr(p, '"');
		if (!end)
			break;
		if (end - p == 1 && *p == '*')
			return 0;	/* every cache */
		if (g->nr == RL_BPF_REFS_GLOBS || end - p >= RL_BPF_CACHE_NAME) {
			pr_err("perf refleak: -b --refs takes %d caches of less than %d characters at the most\n",
			       RL_BPF_REFS_GLOBS, RL_BPF_CACHE_NAME);
			return -1;
		}
		memcpy(g->glob[g->nr++], p, end - p);
	}
	g->narrowed = g->nr > 0;
	return 0;
}

/*
 * open, size (@nr_entries objects followed at once, 0: the default), load
 * and attach the programs, and enable them; with @refs, the one that keeps
 * the gets and puts of the objects followed too, of the caches in @refs
 * when it is narrowed.  0 or -1
 */
static int rl_load(unsigned int nr_entries, const struct rl_refs_globs *refs)
{
	struct bpf_program *prog;
	u64 start_ns = rl_monotonic_ns();
	double opened, loaded;
	int err, k;
	u32 n;

	skel = refleak_bpf__open();
	if (!skel) {
		pr_err("perf refleak: cannot open the BPF programs\n");
		return -1;
	}
	n = nr_entries ?: REFLEAK_BPF_DEFAULT_ENTRIES;
	bpf_map__set_max_entries(skel->maps.objects, n);
	bpf_map__set_max_entries(skel->maps.counters, 2 * n);
	bpf_map__set_max_entries(skel->maps.reports, n / 4 ?: 1);
	bpf_map__set_max_entries(skel->maps.sites, n / 4 ?: 1);
	bpf_map__set_max_entries(skel->maps.alloc_stacks, n / 4 ?: 1);
	bpf_map__set_max_entries(skel->maps.procs, n / 4 ?: 1);
	/* a few gets and puts per object followed, most of them balanced soon */
	bpf_map__set_max_entries(skel->maps.refs, refs ? 4 * n : 1);
	bpf_map__set_max_entries(skel->maps.samples, refs ? n / 8 ?: 1 : 1);
	bpf_map__set_max_entries(skel->maps.sample_next, refs ? n / 16 ?: 1 : 1);
	skel->rodata->follow_refs = refs;
	if (refs && refs->narrowed) {
		memcpy(skel->rodata->refs_globs, refs->glob, sizeof(refs->glob));
		skel->rodata->nr_refs_globs = refs->nr;
	}
	if (!refs)
		bpf_program__set_autoload(skel->progs.rl_ref_trace_ref, false);
	skel->rodata->nr_cpus = libbpf_num_possible_cpus();
	skel->rodata->mark_stale_ticks = rl_hz();
	/* the kernel series' own event: without it, what RCU frees is not seen */
	if (!is_valid_tracepoint(rl_ev_name(RL_BPF_KFREE_RCU))) {
		for (k = 0; k < RL_BPF_LEVELS; k++)
			bpf_program__set_autoload(rl_prog(RL_BPF_KFREE_RCU, k), false);
	}
	rl_verifier_stats_ask();
	opened = rl_seconds_since(start_ns);

	err = refleak_bpf__load(skel);
	loaded = rl_seconds_since(start_ns);
	rl_verifier_stats_show();
	if (err) {
		pr_err("perf refleak: cannot load the BPF programs (%d): a kernel with BTF (CONFIG_DEBUG_INFO_BTF) and the ref_trace events is needed\n",
		       err);
		goto out;
	}

	err = refleak_bpf__attach(skel);
	if (err) {
		pr_err("perf refleak: cannot attach the BPF programs (%d)\n", err);
		goto out;
	}
	/* every program of an event runs from here: its events are counted */
	skel->bss->enabled = 1;
	rl_counting_ns = rl_monotonic_ns();
	rl_settle();
	rl_read_counts(&rl_start, true);
	rl_nr_progs = 0;
	bpf_object__for_each_program(prog, skel->obj)
		rl_nr_progs += bpf_program__autoload(prog);
	pr_debug("perf refleak: BPF programs opened in %.3f s, loaded in %.3f s, attached in %.3f s\n",
		 opened, loaded - opened, rl_seconds_since(start_ns) - loaded);
	rl_ready_s = rl_seconds_since(start_ns);
	return 0;
out:
	refleak_bpf__destroy(skel);
	skel = NULL;
	return -1;
}

/* that the programs count, on stderr */
static void rl_say_counting(void *ctx __maybe_unused)
{
	fprintf(stderr,
		"[ perf refleak: counting in the kernel: %d BPF programs ready in %.1f s ]\n",
		rl_nr_progs, rl_ready_s);
}

/*
 * perf record -b: the programs are loaded, and count, before perf record
 * opens its events and starts the command.  It says so once it records
 * (its record_start hook): a signal from then on stops the recording with
 * what the programs kept, where one before killed perf record.
 */
int refleak_bpf_prepare(struct evlist *evlist, unsigned int nr_entries)
{
	/*
	 * The recording has the event for its format: its gets and puts are
	 * wanted, of the caches its filter names
	 */
	struct evsel *ref = evlist__find_evsel_by_str(evlist, rl_ev_name(RL_BPF_REF));
	struct rl_refs_globs refs = { .nr = 0, };
	int err;

	if (parse_event(evlist, "bpf-output/name=" REFLEAK_BPF_EVENT "/")) {
		pr_err("perf refleak: cannot add the %s event\n", REFLEAK_BPF_EVENT);
		return -1;
	}
	err = ref ? rl_refs_globs_parse(ref->filter, &refs) : 0;
	if (!err)
		err = rl_load(nr_entries, ref ? &refs : NULL);
	if (err)
		return -1;
	return perf_hooks__set_hook("record_start", rl_say_counting, NULL);
}

/* ------------------------------------------------------------------ */
/* stacks: the BPF map's, without the frames of BPF and tracing        */

/* the name of the kernel function @ip is in; NULL: no symbol covers it */
static const char *rl_function(struct machine *machine, u64 ip)
{
	struct map *map = NULL;
	struct symbol *sym = machine__find_kernel_symbol(machine, ip, &map);

	map__put(map);	/* the lookup took a reference on it */
	return sym ? sym->name : NULL;
}

struct rl_frames {
	u32	nr;
	u64	ips[RL_MAX_STACK];
};

struct rl_writer {
	struct perf_session	*session;
	struct machine		*machine;
	struct hashmap		*stacks;	/* stack key -> struct rl_frames */
	u64			nr_stacks_lost;	/* keys no longer in the map */
	/* ... of a sample's events: only what the report learns is less */
	u64			nr_sample_stacks_lost;
	bool			sample;		/* writing samples */
	int			stacks_fd;
	int			refs_fd;
	struct rl_bpf_ev	*refs;		/* an object's gets and puts, RL_BPF_REFS */
	int			alloc_stacks_fd;
	int			names_fd;
	ssize_t			bytes;
	u64			last_time;	/* of the object being written */
	int			err;
	union perf_event	*event;
	u8			*raw;		/* a sample's raw data, padded */
	struct evsel		*evsel[RL_BPF_NR_EV_KINDS];
	struct evsel		*ref_evsel;	/* NULL: gets and puts not followed */
	struct evsel		*bpf_evsel;
	struct ip_callchain	*callchain;
	bool			checkpoint;	/* the programs still run */
};

static size_t rl_id_hash(long key, void *ctx __maybe_unused)
{
	return key;
}

static bool rl_id_equal(long a, long b, void *ctx __maybe_unused)
{
	return a == b;
}

/*
 * The machinery that ran the program: the program itself (no symbol, or
 * bpf_prog_*), bpf_trace_run*(), __bpf_trace_*() and __traceiter_*().
 * The plain recording's stack starts in the function that hit the
 * tracepoint: so does this one.
 */
static bool rl_machinery(struct rl_writer *w, u64 ip)
{
	const char *name = rl_function(w->machine, ip);

	return !name || strstarts(name, "bpf_") || strstarts(name, "__bpf_trace_") ||
	       strstarts(name, "__traceiter_");
}

static const struct rl_frames *rl_frames_of(struct rl_writer *w, u64 key)
{
	struct rl_bpf_stack taken;
	struct rl_frames *st;
	u32 i, first = 0, nr;

	if (!key)
		return NULL;
	if (hashmap__find(w->stacks, key, &st))
		return st;
	st = zalloc(sizeof(*st));
	if (!st)
		return NULL;
	if (bpf_map_lookup_elem(w->alloc_stacks_fd, &key, &taken) &&
	    bpf_map_lookup_elem(w->stacks_fd, &key, &taken)) {
		if (w->sample)
			w->nr_sample_stacks_lost++;
		else
			w->nr_stacks_lost++;
	} else {
		nr = min_t(u32, taken.nr, RL_MAX_STACK);
		/* the machinery is at the top: skip up to its last frame there */
		for (i = 0; i < nr && i < 8; i++)
			if (rl_machinery(w, taken.ips[i]))
				first = i + 1;
		st->nr = nr - first;
		memcpy(st->ips, taken.ips + first, st->nr * sizeof(u64));
	}
	if (hashmap__add(w->stacks, key, st)) {
		free(st);
		return NULL;
	}
	return st;
}

/* ------------------------------------------------------------------ */
/* samples                                                             */

struct rl_raw {
	struct tep_event *tp;
	u32	size;
	u8	data[512];
};

static void rl_raw_init(struct rl_raw *r, struct tep_event *tp, u32 pid)
{
	struct tep_format_field *f;

	memset(r, 0, sizeof(*r));
	r->tp = tp;
	for (f = tp->format.common_fields; f; f = f->next)
		r->size = max(r->size, (u32)(f->offset + f->size));
	for (f = tp->format.fields; f; f = f->next)
		r->size = max(r->size, (u32)(f->offset + f->size));
	if (r->size > sizeof(r->data))
		r->size = sizeof(r->data);
	f = tep_find_common_field(tp, "common_type");
	if (f && f->size == 2)
		*(u16 *)(r->data + f->offset) = tp->id;
	f = tep_find_common_field(tp, "common_pid");
	if (f && f->size == 4)
		*(u32 *)(r->data + f->offset) = pid;
}

/* field @name (NULL: the event has none) of the record begun in @r */
static void rl_raw_set(struct rl_raw *r, const char *name, u64 val)
{
	struct tep_format_field *f = name ? tep_find_field(r->tp, name) : NULL;

	if (!f || (u32)(f->offset + f->size) > r->size)
		return;
	switch (f->size) {
	case 1:
		*(u8 *)(r->data + f->offset) = val;
		break;
	case 2:
		*(u16 *)(r->data + f->offset) = val;
		break;
	case 4:
		*(u32 *)(r->data + f->offset) = val;
		break;
	case 8:
		*(u64 *)(r->data + f->offset) = val;
		break;
	default:
		break;
	}
}

/* a __string field: its data after the fixed fields, located by (len << 16 | offset) */
static void rl_raw_set_str(struct rl_raw *r, const char *name, const char *s)
{
	struct tep_format_field *f = name ? tep_find_field(r->tp, name) : NULL;
	u32 len = strlen(s) + 1;

	if (!f || !(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4 ||
	    r->size + len > sizeof(r->data))
		return;
	*(u32 *)(r->data + f->offset) = len << 16 | r->size;
	memcpy(r->data + r->size, s, len);
	r->size += len;
}

static void rl_write_sample(struct rl_writer *w, struct evsel *evsel, u64 time, u32 pid,
			    u32 tid, u32 cpu, u64 ip, const struct rl_frames *st,
			    const void *raw, u32 raw_size)
{
	u64 type = evsel->core.attr.sample_type;
	struct perf_sample sample = {
		.ip = ip,
		.pid = pid,
		.tid = tid,
		.time = time,
		.cpu = cpu,
		.period = 1,
		.id = evsel->core.id ? evsel->core.id[0] : 0,
		.stream_id = evsel->core.id ? evsel->core.id[0] : 0,
		.raw_data = w->raw,
		/* the raw data and its u32 size end on a u64 boundary */
		.raw_size = PERF_ALIGN(raw_size + sizeof(u32), sizeof(u64)) - sizeof(u32),
	};
	size_t size;

	if (w->err)
		return;
	/* padded with zeroes, not with what follows @raw */
	memcpy(w->raw, raw, raw_size);
	memset(w->raw + raw_size, 0, sample.raw_size - raw_size);
	w->callchain->nr = 0;
	if (st) {
		w->callchain->ips[0] = PERF_CONTEXT_KERNEL;
		memcpy(w->callchain->ips + 1, st->ips, st->nr * sizeof(u64));
		w->callchain->nr = st->nr + 1;
	}
	sample.callchain = w->callchain;
	size = perf_event__sample_event_size(&sample, type, 0, 0);
	w->event->header.type = PERF_RECORD_SAMPLE;
	w->event->header.misc = PERF_RECORD_MISC_KERNEL;
	w->event->header.size = size;
	if (perf_event__synthesize_sample(w->event, type, 0, 0, &sample) ||
	    perf_data_file__write(&w->session->data->file, w->event, size) < 0) {
		pr_err("perf refleak: failed to write the recording: %m\n");
		w->err = -1;
		return;
	}
	w->bytes += size;
}

static const char *rl_cache_name(struct rl_writer *w, u64 cache, char *buf)
{
	if (bpf_map_lookup_elem(w->names_fd, &cache, buf))
		snprintf(buf, RL_BPF_CACHE_NAME, "?");
	buf[RL_BPF_CACHE_NAME - 1] = '\0';
	return buf;
}

/* the tracepoint of an event of @kind, its record begun in @r; NULL: none */
static struct evsel *rl_raw_begin(struct rl_writer *w, u8 kind, u32 pid, struct rl_raw *r)
{
	struct evsel *evsel = kind < RL_BPF_NR_EV_KINDS ? w->evsel[kind] :
			      kind == RL_BPF_REF ? w->ref_evsel : NULL;
	struct tep_event *tp = evsel ? evsel__tp_format(evsel) : NULL;

	if (!tp)
		return NULL;
	rl_raw_init(r, tp, pid);
	return evsel;
}

/*
 * An object's events are written in the order they came, each later than
 * the one before: with a coarse clock (a guest whose TSC the kernel gave
 * up on counts in ticks) a put and the free before it may have one time,
 * and the report, which sorts by time, would see them the other way
 * round.  A nanosecond apart is as close as they may have been.
 */
static u64 rl_time_after(struct rl_writer *w, u64 time)
{
	if (time <= w->last_time)
		time = w->last_time + 1;
	w->last_time = time;
	return time;
}

/*
 * The sample of one event of an object, in its tracepoint's layout: the
 * fields the report reads of it (refleak-events.c).
 */
static void rl_write_ev(struct rl_writer *w, const struct rl_bpf_obj *o,
			const struct rl_bpf_ev *ev, u64 addr)
{
	const struct refleak_ev_fields *f;
	char name[RL_BPF_CACHE_NAME];
	struct evsel *evsel;
	struct rl_raw raw;
	u64 obj;

	switch (ev->kind) {
	case RL_BPF_KFREE:
	case RL_BPF_KFREE_RCU:
	case RL_BPF_CACHE_FREE:
		obj = addr;
		break;
	case RL_BPF_SET:
	case RL_BPF_FINAL_PUT:
	case RL_BPF_ANOMALY:
	case RL_BPF_REF:
		obj = addr + ev->offset;	/* the counter */
		break;
	default:
		return;
	}
	evsel = rl_raw_begin(w, ev->kind, ev->pid, &raw);
	if (!evsel)
		return;
	f = refleak_event__of_bpf(ev->kind)->fields;
	rl_raw_set(&raw, f->obj, obj);
	rl_raw_set(&raw, f->caller, ev->caller);
	rl_raw_set(&raw, f->value, (u32)ev->value);
	rl_raw_set(&raw, f->counter_kind, ev->ctr_kind);
	rl_raw_set(&raw, f->delta, (u32)ev->delta);
	if (ev->kind == RL_BPF_CACHE_FREE || (ev->kind == RL_BPF_REF && o->cache))
		rl_raw_set_str(&raw, f->cache, rl_cache_name(w, o->cache, name));
	rl_write_sample(w, evsel, rl_time_after(w, ev->time), ev->pid, ev->tid, ev->cpu,
			ev->caller, rl_frames_of(w, ev->stack), raw.data, raw.size);
}

static void rl_write_alloc(struct rl_writer *w, const struct rl_bpf_obj *o)
{
	const struct refleak_ev_fields *f;
	char name[RL_BPF_CACHE_NAME];
	struct evsel *evsel;
	struct rl_raw raw;

	evsel = rl_raw_begin(w, o->kind, o->pid, &raw);
	if (!evsel)
		return;
	f = refleak_event__of_bpf(o->kind)->fields;
	rl_raw_set(&raw, f->caller, o->call_site);
	rl_raw_set(&raw, f->obj, o->ptr);
	rl_raw_set(&raw, f->bytes_req, o->size);
	rl_raw_set(&raw, f->bytes, o->size);
	if (o->kind == RL_BPF_CACHE_ALLOC)
		rl_raw_set_str(&raw, f->cache, rl_cache_name(w, o->cache, name));
	rl_write_sample(w, evsel, rl_time_after(w, o->time), o->pid, o->tid, o->cpu,
			o->call_site, rl_frames_of(w, o->stack), raw.data, raw.size);
}

static int rl_ev_time_cmp(const void *a, const void *b)
{
	const struct rl_bpf_ev *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * An object's gets and puts kept, in time order (two CPUs may number
 * them the other way round), into w->refs; those the map lost are left
 * out, which the counts before the ones kept then tell
 */
static u32 rl_read_refs(struct rl_writer *w, const struct rl_bpf_obj *o)
{
	u32 i, n = 0, nr = min_t(u32, o->nr_refs, RL_BPF_REFS);
	struct rl_ref_key key = { .id = o->id };

	if (!w->ref_evsel)
		return 0;
	for (i = 0; i < nr; i++) {
		key.nr = i;
		if (!bpf_map_lookup_elem(w->refs_fd, &key, &w->refs[n]))
			n++;
	}
	qsort(w->refs, n, sizeof(*w->refs), rl_ev_time_cmp);
	return n;
}

static void rl_write_object(struct rl_writer *w, const struct rl_bpf_obj *o)
{
	u32 i, r = 0, nr_refs;

	w->last_time = 0;
	if (o->flags & RL_BPF_OBJ_ORPHAN) {
		/* an anomaly on no object: ptr is the counter, its offset 0 */
		if (o->nr_log)
			rl_write_ev(w, o, &o->log[0], o->ptr);
		return;
	}
	nr_refs = rl_read_refs(w, o);
	rl_write_alloc(w, o);
	for (i = 0; i < o->nr_log && i < RL_BPF_LOG; i++) {
		/* the free comes before a late event */
		if ((o->flags & RL_BPF_OBJ_FREED) && i >= o->nr_log_at_free)
			break;
		/* a counter's gets and puts come after its birth, before its final put */
		for (; r < nr_refs && w->refs[r].time < o->log[i].time; r++)
			rl_write_ev(w, o, &w->refs[r], o->ptr);
		rl_write_ev(w, o, &o->log[i], o->ptr);
	}
	for (; r < nr_refs; r++)
		rl_write_ev(w, o, &w->refs[r], o->ptr);
	if (o->flags & RL_BPF_OBJ_FREED)
		rl_write_ev(w, o, &o->free, o->ptr);
	for (; i < o->nr_log && i < RL_BPF_LOG; i++)
		rl_write_ev(w, o, &o->log[i], o->ptr);
}

/*
 * The entries of a hash map, read in batches: at a checkpoint the programs
 * go on changing the maps, and bpf_map_get_next_key() starts again from
 * the first key when the one it is given was deleted meanwhile.
 */
#define RL_BATCH	256

struct rl_map_iter {
	int	fd;
	size_t	key_size;
	size_t	value_size;
	u8	*keys;
	u8	*values;
	u32	count;		/* entries in keys and values */
	u32	next;		/* the next of them */
	u32	token;		/* where the next batch starts: a bucket */
	bool	started;
	bool	done;
};

static int rl_map_iter_init(struct rl_map_iter *it, struct bpf_map *map)
{
	*it = (struct rl_map_iter){
		.fd = bpf_map__fd(map),
		.key_size = bpf_map__key_size(map),
		.value_size = bpf_map__value_size(map),
	};
	it->keys = calloc(RL_BATCH, it->key_size);
	it->values = calloc(RL_BATCH, it->value_size);
	return it->keys && it->values ? 0 : -ENOMEM;
}

static void rl_map_iter_exit(struct rl_map_iter *it)
{
	free(it->keys);
	free(it->values);
}

/* the next entry's key and value; false at the end, or on an error (@w->err) */
static bool rl_map_iter_next(struct rl_writer *w, struct rl_map_iter *it,
			     void **key, void **value)
{
	while (it->next == it->count) {
		u32 token, count = RL_BATCH;
		int err;

		if (it->done || w->err)
			return false;
		err = bpf_map_lookup_batch(it->fd, it->started ? &it->token : NULL, &token,
					   it->keys, it->values, &count, NULL);
		if (err && errno != ENOENT) {
			pr_err("perf refleak: cannot read a map of the BPF programs: %m\n");
			w->err = -1;
			return false;
		}
		/* ENOENT: the last batch, maybe empty */
		it->done = err != 0;
		it->started = true;
		it->token = token;
		it->count = count;
		it->next = 0;
	}
	*key = it->keys + it->next * it->key_size;
	*value = it->values + it->next * it->value_size;
	it->next++;
	return true;
}

static void rl_write_objects(struct rl_writer *w, struct bpf_map *map)
{
	struct rl_map_iter it;
	void *key, *o;

	if (rl_map_iter_init(&it, map))
		w->err = -ENOMEM;
	while (rl_map_iter_next(w, &it, &key, &o))
		rl_write_object(w, o);
	rl_map_iter_exit(&it);
}

/* a side-band record of @pid at @time, its body of @size bytes in w->event */
static void rl_write_side(struct rl_writer *w, u32 type, size_t size, u32 pid, u64 time)
{
	struct evsel *evsel = w->bpf_evsel;
	struct perf_sample sample = {
		.pid = pid,
		.tid = pid,
		.time = time,
		.id = evsel->core.id ? evsel->core.id[0] : 0,
		.stream_id = evsel->core.id ? evsel->core.id[0] : 0,
	};

	if (w->err)
		return;
	size = PERF_ALIGN(size, sizeof(u64));
	if (evsel->core.attr.sample_id_all)
		size += perf_event__synthesize_id_sample((void *)w->event + size,
							 evsel->core.attr.sample_type, &sample);
	w->event->header.type = type;
	w->event->header.misc = 0;
	w->event->header.size = size;
	if (perf_data_file__write(&w->session->data->file, w->event, size) < 0) {
		pr_err("perf refleak: failed to write the recording: %m\n");
		w->err = -1;
		return;
	}
	w->bytes += size;
}

/* the fork or exit (@type) of process @pid, child of @ppid */
static void rl_write_task(struct rl_writer *w, u32 type, u32 pid, u32 ppid, u64 time)
{
	memset(&w->event->fork, 0, sizeof(w->event->fork));
	w->event->fork.pid = pid;
	w->event->fork.tid = pid;
	w->event->fork.ppid = ppid;
	w->event->fork.ptid = ppid;
	w->event->fork.time = time;
	rl_write_side(w, type, sizeof(w->event->fork), pid, time);
}

/* a running process's name now: it may have changed with an exec */
static void rl_comm_now(u32 pid, char *comm, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, comm, size - 1);
	close(fd);
	if (n <= 0)
		return;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

/*
 * The processes the programs kept, as perf's fork, comm and exit records
 * (perf record ran with --no-tracking): a fork and an exit where they were
 * seen, a name from the fork on, the one at the exit or, for a process
 * still running, its name now.
 */
static void rl_write_procs(struct rl_writer *w)
{
	struct rl_map_iter it;
	const struct rl_bpf_proc *p;
	char comm[sizeof(p->comm) + 1];
	void *key, *value;
	size_t len;

	if (rl_map_iter_init(&it, skel->maps.procs))
		w->err = -ENOMEM;
	while (rl_map_iter_next(w, &it, &key, &value)) {
		u32 pid = *(u32 *)key;
		u64 from;

		p = value;
		memcpy(comm, p->comm, sizeof(p->comm));
		comm[sizeof(p->comm)] = '\0';
		if (!p->exit_ns)
			rl_comm_now(pid, comm, sizeof(comm));
		if (p->fork_ns)
			rl_write_task(w, PERF_RECORD_FORK, pid, p->ppid, p->fork_ns);
		/* from its fork on; a process from before the recording has had it all along */
		from = p->fork_ns ? p->fork_ns + 1 : 1;
		len = strlen(comm) + 1;
		memset(&w->event->comm, 0, sizeof(w->event->comm));
		w->event->comm.pid = pid;
		w->event->comm.tid = pid;
		memcpy(w->event->comm.comm, comm, len);
		rl_write_side(w, PERF_RECORD_COMM, offsetof(struct perf_record_comm, comm) + len,
			      pid, from);
		if (p->exit_ns)
			rl_write_task(w, PERF_RECORD_EXIT, pid, p->ppid, p->exit_ns);
	}
	rl_map_iter_exit(&it);
}

static void rl_write_sites(struct rl_writer *w)
{
	const struct rl_bpf_site_key *key;
	const struct rl_bpf_site *s;
	struct rl_map_iter it;
	struct {
		struct refleak_bpf_site_rec rec;
		u64 ips[RL_MAX_STACK];
	} r;
	void *k, *v;

	if (rl_map_iter_init(&it, skel->maps.sites))
		w->err = -ENOMEM;
	while (rl_map_iter_next(w, &it, &k, &v)) {
		const struct rl_frames *st;

		key = k;
		s = v;
		if (!s->nr_balanced)
			continue;
		memset(&r, 0, sizeof(r));
		r.rec.type = REFLEAK_BPF_REC_SITE;
		r.rec.call_site = key->call_site;
		if (key->cache)
			rl_cache_name(w, key->cache, r.rec.cache);
		else
			snprintf(r.rec.cache, sizeof(r.rec.cache), "%s", "kmalloc");
		r.rec.sum = *s;
		st = rl_frames_of(w, key->stack);
		if (st) {
			r.rec.nr_ips = st->nr;
			memcpy(r.ips, st->ips, st->nr * sizeof(u64));
		}
		rl_write_sample(w, w->bpf_evsel, s->died_last_ns, 0, 0, 0, key->call_site, NULL,
				&r, sizeof(r.rec) + r.rec.nr_ips * sizeof(u64));
	}
	rl_map_iter_exit(&it);
}

/*
 * The events no program took, or two did (see rl_take() in refleak.bpf.c),
 * between the counts taken once the programs run and once they stopped
 * marking events (rl_settle()): an event across either is counted in both.
 */
static u64 rl_events_missed(const struct rl_counts *end, bool say, bool running)
{
	u64 nr = 0, seen, taken;
	int i;

	for (i = 0; i < RL_BPF_NR_EV_KINDS; i++) {
		seen = end->seen[i] + end->unseen[i] - rl_start.seen[i] - rl_start.unseen[i];
		taken = end->taken[i] - rl_start.taken[i];
		if (say)
			pr_debug("perf refleak: %s: %llu seen, %llu taken\n", rl_ev_name(i),
				 (unsigned long long)seen, (unsigned long long)taken);
		/*
		 * More taken than seen: some taken twice, as bad.  Unless the
		 * programs still run: then @end's taken were read after its
		 * seen, and those seen before and not taken since are missed.
		 */
		if (seen > taken)
			nr += seen - taken;
		else if (!running)
			nr += taken - seen;
	}
	return nr;
}

/* -v: where the counters born in no object followed were set */
static void rl_debug_unplaced(struct rl_writer *w)
{
	int fd = bpf_map__fd(skel->maps.unplaced);
	u64 key, *prev = NULL, n;
	const char *name;

	if (verbose <= 0)
		return;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &n))
			continue;
		name = rl_function(w->machine, key);
		pr_debug("perf refleak: %llu counters born in no object followed, set by %s\n",
			 (unsigned long long)n, name ?: "?");
	}
}

/*
 * -v: what each program cost, when the kernel measured it
 * (sysctl kernel.bpf_stats_enabled=1 for the whole recording)
 */
static void rl_debug_prog_times(void)
{
	struct bpf_program *prog;

	if (verbose <= 0)
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_prog_get_info_by_fd(fd, &info, &len) || !info.run_cnt)
			continue;
		pr_debug("perf refleak: %s: run %llu times, %llu ns each, %.3f s in all\n",
			 bpf_program__name(prog), (unsigned long long)info.run_cnt,
			 (unsigned long long)(info.run_time_ns / info.run_cnt),
			 info.run_time_ns / 1e9);
	}
}

static u32 rl_map_entries(struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	u8 key[64], *prev = NULL;
	u32 n = 0;

	if (bpf_map__key_size(map) > sizeof(key))
		return 0;
	while (!bpf_map_get_next_key(fd, prev, key)) {
		prev = key;
		n++;
	}
	return n;
}

/* -v: which of an event's programs took it: the later ones, when nested */
static void rl_debug_taken_by(void)
{
	int nr_cpus = libbpf_num_possible_cpus(), cpu, k;
	u64 by[RL_BPF_LEVELS] = { 0 }, walked = 0, known = 0;
	struct rl_cpu *cpus;
	u32 zero = 0;

	cpus = nr_cpus > 0 ? calloc(nr_cpus, sizeof(*cpus)) : NULL;
	if (!cpus || bpf_map_lookup_elem(bpf_map__fd(skel->maps.cpu_state), &zero, cpus)) {
		free(cpus);
		return;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		for (k = 0; k < RL_BPF_LEVELS; k++)
			by[k] += cpus[cpu].taken_by[k];
		walked += cpus[cpu].stacks_walked;
		known += cpus[cpu].stacks_known;
	}
	free(cpus);
	for (k = 0; k < RL_BPF_LEVELS; k++)
		pr_debug("perf refleak: events taken by their program %d of %d: %llu\n",
			 k + 1, RL_BPF_LEVELS, (unsigned long long)by[k]);
	pr_debug("perf refleak: stacks unwound: %llu; known by their return addresses: %llu\n",
		 (unsigned long long)walked, (unsigned long long)known);
}

/* -v: how full the maps --map-nr-entries sizes were */
static void rl_debug_maps(void)
{
	if (verbose <= 0)
		return;
	pr_debug("perf refleak: objects followed at once: %llu at the most, of %u\n",
		 (unsigned long long)skel->bss->max_objects_live,
		 bpf_map__max_entries(skel->maps.objects));
	pr_debug("perf refleak: sites summed: %u of %u; allocation stacks: %u of %u; reports: %u of %u\n",
		 rl_map_entries(skel->maps.sites), bpf_map__max_entries(skel->maps.sites),
		 rl_map_entries(skel->maps.alloc_stacks),
		 bpf_map__max_entries(skel->maps.alloc_stacks),
		 rl_map_entries(skel->maps.reports), bpf_map__max_entries(skel->maps.reports));
	if (bpf_program__autoload(skel->progs.rl_ref_trace_ref)) {
		struct bpf_prog_info info = {};
		u32 len = sizeof(info);

		bpf_prog_get_info_by_fd(bpf_program__fd(skel->progs.rl_ref_trace_ref), &info, &len);
		pr_debug("perf refleak: gets and puts of objects followed: %llu; kept at once: %llu at the most, of %u; not kept: %llu over an object's %d, %llu with the map full; missed, nested in the program: %llu (of every counter)\n",
			 (unsigned long long)skel->bss->nr_refs_seen,
			 (unsigned long long)skel->bss->max_refs_kept,
			 bpf_map__max_entries(skel->maps.refs),
			 (unsigned long long)skel->bss->nr_refs_not_kept, RL_BPF_REFS,
			 (unsigned long long)skel->bss->nr_refs_map_full,
			 (unsigned long long)info.recursion_misses);
		pr_debug("perf refleak: balanced objects kept whole: %u of %u\n",
			 rl_map_entries(skel->maps.samples),
			 bpf_map__max_entries(skel->maps.samples));
	}
	pr_debug("perf refleak: processes kept: %u of %u\n",
		 rl_map_entries(skel->maps.procs), bpf_map__max_entries(skel->maps.procs));
	pr_debug("perf refleak: objects followed with the stack of their counter's birth: %llu\n",
		 (unsigned long long)skel->bss->nr_birth_stacks);
	pr_debug("perf refleak: events in flight left marked: %llu taken, %llu not taken; stale marks taken over: %llu; not marked (no free slot): %llu\n",
		 (unsigned long long)skel->bss->nr_marks_left_taken,
		 (unsigned long long)skel->bss->nr_marks_left_untaken,
		 (unsigned long long)skel->bss->nr_marks_taken_over,
		 (unsigned long long)skel->bss->nr_marks_failed);
	rl_debug_taken_by();
	if (skel->bss->nr_marks_failed)
		pr_debug("perf refleak: the slots they found held marks of this tick or the last: %llu, of the last 100 ticks: %llu, older: %llu\n",
			 (unsigned long long)skel->bss->nr_marks_failed_ages[0],
			 (unsigned long long)skel->bss->nr_marks_failed_ages[1],
			 (unsigned long long)skel->bss->nr_marks_failed_ages[2]);
}

static void rl_write_misses(struct rl_writer *w, const struct rl_counts *counts, u64 end)
{
	struct refleak_bpf_misses_rec rec = { .type = REFLEAK_BPF_REC_MISSES, };
	u64 recursion;
	int i;

	for (i = 0; i < RL_BPF_NR_MISSES; i++)
		rec.nr[i] = skel->bss->misses[i];
	rec.first_ns = skel->bss->first_miss_ns;
	rec.last_ns = skel->bss->last_miss_ns;
	/* pushed out of the stack map before the end: when is not known */
	if (w->nr_stacks_lost) {
		rec.nr[RL_BPF_MISS_STACKS] += w->nr_stacks_lost;
		rec.first_ns = 0;
		rec.last_ns = end;
	}
	/* when is not known: the whole recording */
	recursion = rl_events_missed(counts, true, w->checkpoint);
	if (recursion) {
		rec.nr[RL_BPF_MISS_NESTED] += recursion;
		rec.first_ns = 0;
		rec.last_ns = end;
	}
	rec.nr_unplaced_sets = skel->bss->nr_unplaced_sets;
	rl_debug_unplaced(w);
	rl_debug_prog_times();
	rl_debug_maps();
	if (w->nr_sample_stacks_lost)
		pr_debug("perf refleak: stacks of balanced objects kept whole no longer in the map: %llu\n",
			 (unsigned long long)w->nr_sample_stacks_lost);
	/* first in time: the report knows which verdicts are uncertain before it makes them */
	rl_write_sample(w, w->bpf_evsel, rec.first_ns ?: 1, 0, 0, 0, 0, NULL, &rec, sizeof(rec));
}

/* last in time: when the programs stopped, or the checkpoint was taken */
static void rl_write_end(struct rl_writer *w, u64 end)
{
	struct refleak_bpf_end_rec rec = {
		.type = REFLEAK_BPF_REC_END,
		.flags = w->checkpoint ? REFLEAK_BPF_END_CHECKPOINT : 0,
		.counting_ns = rl_counting_ns,
	};

	rl_write_sample(w, w->bpf_evsel, end, 0, 0, 0, 0, NULL, &rec, sizeof(rec));
}

/* what the programs kept, as samples: at @end_ns, with the events counted in @counts */
static ssize_t rl_write_state(struct perf_session *session, const struct rl_counts *counts,
			      u64 end_ns, bool checkpoint)
{
	struct rl_writer w = { .session = session, .checkpoint = checkpoint, };
	struct hashmap_entry *cur;
	size_t bkt;
	int i;

	w.machine = &session->machines.host;
	w.stacks_fd = bpf_map__fd(skel->maps.stacks);
	w.alloc_stacks_fd = bpf_map__fd(skel->maps.alloc_stacks);
	w.names_fd = bpf_map__fd(skel->maps.cache_names);
	w.refs_fd = bpf_map__fd(skel->maps.refs);
	w.refs = calloc(RL_BPF_REFS, sizeof(*w.refs));
	w.stacks = hashmap__new(rl_id_hash, rl_id_equal, NULL);
	w.event = zalloc(PERF_SAMPLE_MAX_SIZE);
	w.raw = zalloc(PERF_SAMPLE_MAX_SIZE);
	w.callchain = zalloc(sizeof(*w.callchain) + (RL_MAX_STACK + 1) * sizeof(u64));
	w.bpf_evsel = evlist__find_evsel_by_str(session->evlist, REFLEAK_BPF_EVENT);
	for (i = 0; i < RL_BPF_NR_EV_KINDS; i++)
		w.evsel[i] = evlist__find_evsel_by_str(session->evlist, rl_ev_name(i));
	if (bpf_program__autoload(skel->progs.rl_ref_trace_ref))
		w.ref_evsel = evlist__find_evsel_by_str(session->evlist, rl_ev_name(RL_BPF_REF));
	if (IS_ERR(w.stacks) || !w.event || !w.raw || !w.callchain || !w.bpf_evsel || !w.refs ||
	    !w.evsel[RL_BPF_KMALLOC] || !w.evsel[RL_BPF_SET]) {
		pr_err("perf refleak: cannot write what the BPF programs kept\n");
		goto out;
	}

	/*
	 * What died first, then what lives.  While the programs go on (a
	 * checkpoint), an object freed between the two reads is then in
	 * neither.  The other way round it was live in one while the other
	 * had freed an object of its site put after it, and the report took
	 * it for a final put never freed: a net namespace waits for the
	 * next cleanup_net() run, which frees it with the later one.
	 */
	w.sample = true;
	rl_write_objects(&w, skel->maps.samples);
	w.sample = false;
	rl_write_sites(&w);
	rl_write_objects(&w, skel->maps.objects);
	rl_write_objects(&w, skel->maps.reports);
	rl_write_procs(&w);
	rl_write_misses(&w, counts, end_ns);
	rl_write_end(&w, end_ns);
out:
	if (!IS_ERR_OR_NULL(w.stacks)) {
		hashmap__for_each_entry(w.stacks, cur, bkt)
			free(cur->pvalue);
		hashmap__free(w.stacks);
	}
	free(w.event);
	free(w.raw);
	free(w.callchain);
	free(w.refs);
	return w.bytes;
}

ssize_t refleak_bpf_write(struct perf_session *session)
{
	struct rl_counts end;
	ssize_t bytes;
	int i;

	if (!skel)
		return 0;
	/*
	 * No event is counted seen from here: those counted are taken all the same.
	 * A task preempted inside an event takes it when it runs again: a
	 * difference left is waited for, up to 2 s.
	 */
	rl_read_counts(&end, true);
	skel->bss->enabled = 0;
	for (i = 0; i < 40; i++) {
		rl_settle();
		rl_read_counts(&end, false);
		if (!rl_events_missed(&end, false, false))
			break;
	}
	/* the maps stay as they are from here */
	refleak_bpf__detach(skel);
	bytes = rl_write_state(session, &end, rl_monotonic_ns(), /*checkpoint=*/false);
	refleak_bpf__destroy(skel);
	skel = NULL;
	return bytes;
}

/*
 * A checkpoint (perf record --switch-output): the same, while the programs
 * go on, into the output perf record then finishes and sets aside.  The
 * events seen are read before those taken, once those in flight landed.
 */
ssize_t refleak_bpf_checkpoint(struct perf_session *session)
{
	struct rl_counts now, later;

	if (!skel)
		return 0;
	rl_read_counts(&now, true);
	rl_settle();
	rl_read_counts(&later, false);
	memcpy(now.taken, later.taken, sizeof(now.taken));
	return rl_write_state(session, &now, rl_monotonic_ns(), /*checkpoint=*/true);
}

/* ------------------------------------------------------------------ */
/* perf refleak top: the objects followed now, by allocation site      */

int refleak_bpf_top_start(const struct refleak_bpf_opts *opts)
{
	if (rl_load(opts->nr_entries, /*refs=*/NULL))
		return -1;
	rl_say_counting(NULL);
	return 0;
}

static int rl_site_now_cmp(const void *a, const void *b)
{
	const struct refleak_bpf_site_now *x = a, *y = b;

	if (x->call_site != y->call_site)
		return x->call_site < y->call_site ? -1 : 1;
	if (x->cache != y->cache)
		return x->cache < y->cache ? -1 : 1;
	return 0;
}

/*
 * The objects followed now, one entry per object in *@sites, then folded
 * into one per allocation site and cache, sorted by them.  *@missed: what
 * the programs could not keep so far.  The number of sites, or -errno.
 */
ssize_t refleak_bpf_top_read(struct refleak_bpf_site_now **sites, u64 *missed)
{
	int fd = bpf_map__fd(skel->maps.objects), names_fd = bpf_map__fd(skel->maps.cache_names);
	struct refleak_bpf_site_now *v = NULL, *grown;
	size_t nr = 0, alloc = 0, i, j;
	u32 batch = 256, count;
	u64 *keys = NULL, in, out;
	struct rl_bpf_obj *o = NULL;
	char name[RL_BPF_CACHE_NAME];
	bool first = true, last = false;
	int err = 0;

	*missed = 0;
	for (i = 0; i < RL_BPF_NR_MISSES; i++)
		*missed += skel->bss->misses[i];
	/*
	 * By batches, not key by key: the programs delete objects meanwhile,
	 * and a hash map's next key after one deleted is its first again.
	 */
	while (!last) {
		if (!keys) {
			keys = calloc(batch, sizeof(*keys));
			o = calloc(batch, sizeof(*o));
			if (!keys || !o) {
				err = -ENOMEM;
				break;
			}
		}
		count = batch;
		if (bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, o, &count, NULL)) {
			if (errno == ENOSPC && !count) {
				/* a bucket holds more than a batch */
				zfree(&keys);
				zfree(&o);
				batch *= 2;
				continue;
			}
			if (errno != ENOENT) {
				err = -errno;
				break;
			}
			last = true;
		}
		first = false;
		in = out;
		if (nr + count > alloc) {
			alloc = nr + count + alloc;
			grown = realloc(v, alloc * sizeof(*v));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			v = grown;
		}
		for (i = 0; i < count; i++, nr++) {
			v[nr].call_site = o[i].call_site;
			v[nr].cache = o[i].cache;
			v[nr].nr_objects = 1;
			v[nr].oldest_ns = o[i].time;
		}
	}
	free(keys);
	free(o);
	if (err) {
		free(v);
		return err;
	}
	if (nr)
		qsort(v, nr, sizeof(*v), rl_site_now_cmp);
	for (i = 0, j = 0; i < nr; i++) {
		if (j && !rl_site_now_cmp(&v[j - 1], &v[i])) {
			v[j - 1].nr_objects++;
			if (v[i].oldest_ns < v[j - 1].oldest_ns)
				v[j - 1].oldest_ns = v[i].oldest_ns;
			continue;
		}
		v[j] = v[i];
		if (!v[j].cache)
			strcpy(name, "kmalloc");
		else if (bpf_map_lookup_elem(names_fd, &v[j].cache, name))
			strcpy(name, "?");
		name[RL_BPF_CACHE_NAME - 1] = '\0';
		strlcpy(v[j].cache_name, name, sizeof(v[j].cache_name));
		j++;
	}
	*sites = v;
	return j;
}

void refleak_bpf_top_stop(void)
{
	refleak_bpf__destroy(skel);
	skel = NULL;
}
