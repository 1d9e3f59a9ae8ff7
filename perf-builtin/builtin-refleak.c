// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-refleak.c
 *
 * perf refleak: correlate slab allocations and frees (kmem tracepoints) with
 * the life cycle of the reference counters inside the objects
 * (ref_trace:ref_trace_set, ref_trace_final_put and ref_trace_anomaly,
 * CONFIG_REF_TRACE) and with process exits, and report leaked objects,
 * objects put but never freed, puts after free, double puts and the other
 * misuses refcount_t detects, each in a tier of evidence.  With 'record
 * --refs' (ref_trace:ref_trace_ref, every get and put of the chosen caches)
 * it names the references a leaked object was never put.  The correlation
 * itself lives in util/refleak.c and util/refleak-refs.c.
 */
#include "builtin.h"

#include "util/bpf_refleak.h"
#include "util/callchain.h"
#include "util/color.h"
#include "util/config.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/env.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/event.h"
#include "util/hashmap.h"
#include "util/header.h"
#include "util/intlist.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/refleak.h"
#include "util/refleak-events.h"
#include "util/refleak-findings.h"
#include "util/sample.h"
#include "util/session.h"
#include "util/strbuf.h"
#include "util/string2.h"
#include "util/strlist.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "util/target.h"
#include "util/time-utils.h"
#include "util/top.h"
#include "util/tool.h"
#include "util/tracepoint.h"
#include "util/trace-event.h"
#include "util/util.h"

#include <internal/lib.h>
#include <subcmd/pager.h>
#include <subcmd/parse-options.h>

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <event-parse.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <libgen.h>
#include <unistd.h>
#include <linux/time64.h>

/* seconds 'record -- <command>' goes on after the command, see rl_record() */
#define REFLEAK_DEFAULT_SETTLE	"2"
#define REFLEAK_DEFAULT_CHECKPOINT	60	/* seconds, record -b */
#define REFLEAK_KCONFIG		"CONFIG_REF_TRACE"
#define REFLEAK_REFS_KCONFIG	"CONFIG_REF_TRACE_REFS"

/*
 * Exit statuses, see Documentation/perf-refleak.txt.  2 is not used: perf
 * test reads it as "skip".  Usage errors exit 129 like parse_options().
 */
enum {
	RL_EXIT_OK		= 0,
	RL_EXIT_FATAL		= 1,
	RL_EXIT_LEAK		= 3,	/* --fail-on-leak: definite or likely finding */
	RL_EXIT_INCOMPLETE	= 4,	/* --fail-on-leak: none, but events are missing */
	RL_EXIT_USAGE		= 129,
};

/* an event the correlation ignores: not one of refleak-events.h's */
#define RL_EV_OTHER	REFLEAK_EV_NR

static const char * const ev_names[REFLEAK_EV_NR] = {
	[REFLEAK_EV_KMALLOC]		= "kmalloc",
	[REFLEAK_EV_CACHE_ALLOC]	= "kmem_cache_alloc",
	[REFLEAK_EV_KFREE]		= "kfree",
	[REFLEAK_EV_CACHE_FREE]	= "kmem_cache_free",
	[REFLEAK_EV_KFREE_RCU]	= "kfree_rcu",
	[REFLEAK_EV_FINAL_PUT]	= "final_put",
	[REFLEAK_EV_SET]		= "set",
	[REFLEAK_EV_ANOMALY]		= "anomaly",
	[REFLEAK_EV_REF]		= "ref",
};

/* values of ref_trace's kind field the report knows the names of */
#define RL_NR_KIND_VALUES	8

/* per evsel (evsel->priv): event kind and the format fields, looked up once */
struct rl_evsel_info {
	enum refleak_ev_kind		kind;
	struct tep_format_field	*ptr;		/* ptr, or ref: the counter */
	struct tep_format_field	*call_site;	/* call_site or caller */
	struct tep_format_field	*bytes_alloc;
	struct tep_format_field	*name;		/* cache name */
	struct tep_format_field	*value;		/* set's count, anomaly's type, ref's old */
	struct tep_format_field	*delta;		/* ref's delta */
	struct tep_format_field	*counter_kind;	/* anomaly's kind; NULL: not said */
	/* the counter type of each kind value, from the names the format prints */
	enum refleak_counter	counter_of[RL_NR_KIND_VALUES];
};

/* a CPU's last sample: its time and its record, in place or copied */
struct rl_cpu_last {
	u64		time;
	const union perf_event *record;
	union perf_event *copy;
	size_t		alloc;
};

struct refleak_report {
	struct perf_tool	tool;
	struct perf_session	*session;
	struct refleak		*rl;
	/* what every output shows, built once at the end */
	struct refleak_findings	*findings;
	u64			nr_events[REFLEAK_EV_NR];
	u64			nr_bad_samples;
	struct rl_cpu_last	*cpu_last;	/* by cpu */
	int			nr_cpu_last;
	u64			last_time;
	u64			ips[PERF_MAX_STACK_DEPTH];
	/* samples stamped with the time of their CPU's previous sample */
	u64			nr_same_time;
	/* samples identical to their CPU's previous one, dropped */
	u64			nr_copies;
	char			*checkpoint_name;	/* read instead of the input */
	/* why the recording did not finish (NULL: it did): its verdicts cover less */
	const char		*cut_short;
	bool			pipe_started;	/* a pipe's events began */
	bool			pipe_ended;	/* its last record was read */
	bool			has_put_event;
	bool			has_set_event;
	bool			has_kmem_event;
	bool			has_callchain;
	/*
	 * Recorded with -b: the samples of objects not balanced, written at
	 * the end with the times of their events, and the kernel's sums
	 */
	bool			bpf_recording;
	u64			nr_bpf_sites;
	u64			nr_bpf_balanced;
	u64			bpf_counted_ns;	/* how long the programs counted; 0: not said */
	struct refleak_bpf_misses_rec bpf_misses;
	/* options */
	const char		*input_name;
	const char		*sort_keys;
	const char		*min_age_str;
	unsigned int		min_repeat;
	/* filters: which objects get a verdict */
	const char		*time_str;
	const char		*pid_str;
	const char		*tid_str;
	const char		*comm_str;
	struct perf_time_interval *ptime_range;
	int			range_size;
	int			range_num;
	struct intlist		*pid_list;
	struct intlist		*tid_list;
	struct strlist		*comm_list;
	/* strings from perf config, owned here */
	char			*config_sort;
	char			*config_min_age;
	bool			objects;
	bool			all;
	bool			folded;
	const char		*field_sep;	/* -x: CSV */
	bool			timeline;
	unsigned int		max_stack;
	bool			callchain;
	bool			json;
	bool			fail_on_leak;
	bool			force;
};

/* ------------------------------------------------------------------ */
/* event processing                                                    */

/*
 * The format fields of a tracepoint, looked up at its first sample (in a
 * pipe the formats arrive with the stream) and kept in evsel->priv.  An
 * event without the fields the correlation needs is ignored, with a
 * warning.
 */
/*
 * The counter type of each value of @info->counter_kind, by the name the
 * event's format prints it with (__print_symbolic), so that the report does
 * not depend on the kernel's enum.
 */
static void rl_counter_names(struct evsel *evsel, struct rl_evsel_info *info)
{
	const struct tep_print_flag_sym *sym;
	const struct tep_print_arg *arg;
	const struct tep_event *tp = evsel__tp_format(evsel);

	for (arg = tp ? tp->print_fmt.args : NULL; arg; arg = arg->next) {
		const struct tep_print_arg *field = arg->symbol.field;

		if (arg->type != TEP_PRINT_SYMBOL || !field || field->type != TEP_PRINT_FIELD ||
		    !field->field.name || strcmp(field->field.name, info->counter_kind->name))
			continue;
		for (sym = arg->symbol.symbols; sym; sym = sym->next) {
			unsigned long v = sym->value ? strtoul(sym->value, NULL, 0) :
					  RL_NR_KIND_VALUES;

			if (v < RL_NR_KIND_VALUES)
				info->counter_of[v] = refleak_counter__of_kind(sym->str);
		}
	}
}

static struct rl_evsel_info *rl_evsel_info(struct evsel *evsel, const struct refleak_event *ev)
{
	const struct refleak_ev_fields *f = ev->fields;
	struct rl_evsel_info *info = evsel->priv;

	if (info)
		return info;
	info = zalloc(sizeof(*info));
	if (!info)
		return NULL;
	evsel->priv = info;
	info->kind = ev->kind;
	info->ptr = f->obj ? evsel__field(evsel, f->obj) : NULL;
	info->call_site = f->caller ? evsel__field(evsel, f->caller) : NULL;
	info->bytes_alloc = f->bytes ? evsel__field(evsel, f->bytes) : NULL;
	info->name = f->cache ? evsel__field(evsel, f->cache) : NULL;
	info->value = f->value ? evsel__field(evsel, f->value) : NULL;
	info->delta = f->delta ? evsel__field(evsel, f->delta) : NULL;
	/* an anomaly's, a get's or a put's counter type: read where the kernel says it */
	if ((ev->kind == REFLEAK_EV_ANOMALY || ev->kind == REFLEAK_EV_REF) && f->counter_kind)
		info->counter_kind = evsel__field(evsel, f->counter_kind);
	if (info->counter_kind)
		rl_counter_names(evsel, info);
	if (!info->ptr || !info->call_site || (f->value && !info->value) ||
	    (f->delta && !info->delta)) {
		pr_warning("%s lacks the fields perf refleak reads (%s, %s%s%s%s%s), ignored\n",
			   evsel__name(evsel), f->obj, f->caller, f->value ? ", " : "",
			   f->value ?: "", f->delta ? ", " : "", f->delta ?: "");
		info->kind = RL_EV_OTHER;
	}
	return info;
}

static u64 rl_field(struct evsel *evsel, struct tep_format_field *field, struct perf_sample *sample)
{
	if (!field || (u32)(field->offset + field->size) > sample->raw_size)
		return 0;
	return format_field__intval(field, sample, evsel->needs_swap);
}

/* a signed field of any width: ref_trace_set's count is an int, or a long */
static s64 rl_field_signed(struct evsel *evsel, struct tep_format_field *field,
			   struct perf_sample *sample)
{
	u64 v = rl_field(evsel, field, sample);

	return field && field->size == 4 ? (s64)(s32)v : (s64)v;
}

static const char *rl_field_str(struct evsel *evsel, struct tep_format_field *field,
				struct perf_sample *sample, char *buf, size_t size)
{
	u16 len = 0;
	const char *raw;

	if (!field)
		return NULL;
	raw = format_field__get_raw_data(field, sample, evsel->needs_swap, &len);
	if (!raw || !len)
		return NULL;
	/* a __string field ends with its NUL (bounds checked above): use it in place */
	if (raw[len - 1] == '\0')
		return raw;
	if (len >= size)
		len = size - 1;
	memcpy(buf, raw, len);
	buf[len] = '\0';
	return buf;
}

/* kernel part of the callchain, interned once per distinct stack */
static u32 rl_sample_stack(struct refleak_report *rep, struct perf_sample *sample)
{
	struct ip_callchain *cc = sample->callchain;
	bool kernel = true;
	u32 i, n = 0;

	if (!cc || !cc->nr)
		return 0;
	/*
	 * The usual chain, the kernel's context first: its frames are used in
	 * place, up to the next context (the user's, never read).
	 */
	if (cc->ips[0] == PERF_CONTEXT_KERNEL) {
		for (i = 1; i < cc->nr && cc->ips[i] < PERF_CONTEXT_MAX; i++)
			;
		return refleak__intern_stack(rep->rl, cc->ips + 1,
					     min_t(u32, i - 1, ARRAY_SIZE(rep->ips)));
	}
	for (i = 0; i < cc->nr && n < ARRAY_SIZE(rep->ips); i++) {
		u64 ip = cc->ips[i];

		if (ip >= PERF_CONTEXT_MAX) {
			kernel = ip == PERF_CONTEXT_KERNEL;
			continue;
		}
		if (kernel)
			rep->ips[n++] = ip;
	}
	return refleak__intern_stack(rep->rl, rep->ips, n);
}

/*
 * The kernel function @ip is in, its name and start, from the symbols of
 * @machine: the one lookup of the report, whose frames are looked up
 * through the engine's stack table once for each address
 * (refleak_stacks__symbol()), and of top.
 */
static bool rl_kernel_symbol(void *machine, u64 ip, const char **name, u64 *start)
{
	struct map *map = NULL;
	struct symbol *sym = machine__find_kernel_symbol(machine, ip, &map);
	bool found = sym && map;

	if (found) {
		*name = sym->name;
		*start = map__unmap_ip(map, sym->start);
	}
	map__put(map);	/* the lookup took a reference on it */
	return found;
}

/* the engine's symbol lookup (util/refleak-stacks.h), once the session is open */
static bool rl_symbol(void *ctx, u64 ip, const char **name, u64 *start)
{
	struct refleak_report *rep = ctx;

	return rl_kernel_symbol(&rep->session->machines.host, ip, name, start);
}

/*
 * "name+0xoff" of a kernel address (without the offset when !@offset), as
 * builtin-lock.c's get_symbol_name_offset(); the address itself where no
 * symbol covers it
 */
static const char *rl_symbol_name(const char *name, u64 start, u64 addr, bool offset,
				  char *buf, size_t size)
{
	if (!name)
		snprintf(buf, size, "%#" PRIx64, addr);
	else if (offset)
		snprintf(buf, size, "%s+%#" PRIx64, name, addr - start);
	else
		snprintf(buf, size, "%s", name);
	return buf;
}

/*
 * Note a sample's time and CPU.  Returns true when the sample is a copy of
 * its CPU's previous one, identical byte for byte (time, event, payload
 * and stack), which is then not a second event.  A perf record whose
 * perf_mmap__push() pushes again what the kernel added to a ring buffer
 * between its two reads of the head writes such copies after the next
 * FINISHED_ROUND: util/mmap.c consumes only what it pushed, but a
 * recording made by another perf may hold them (a few in a million
 * samples; a final put written twice would be a double put).
 * A real event cannot repeat within a nanosecond; with an unstable clock
 * (below) it can, and one repeated with nothing between on its CPU would
 * be dropped too.
 */
static bool rl_note_sample(struct refleak_report *rep, const union perf_event *event,
			   const struct perf_sample *sample)
{
	int cpu = (int)sample->cpu;
	struct rl_cpu_last *last;
	u16 size = event->header.size;

	if (sample->time > rep->last_time)
		rep->last_time = sample->time;
	if (cpu < 0 || cpu >= 65536)
		return false;
	if (cpu >= rep->nr_cpu_last) {
		int n = cpu + 64;
		struct rl_cpu_last *arr = realloc(rep->cpu_last, n * sizeof(*arr));

		if (!arr)
			return false;
		memset(arr + rep->nr_cpu_last, 0, (n - rep->nr_cpu_last) * sizeof(*arr));
		rep->cpu_last = arr;
		rep->nr_cpu_last = n;
	}
	last = &rep->cpu_last[cpu];
	if (sample->time && sample->time == last->time && last->record &&
	    last->record->header.size == size && !memcmp(last->record, event, size))
		return true;
	/*
	 * An unstable sched_clock (x86 marks it so when the clocksource
	 * watchdog rejects the TSC) clamps each CPU's clock to its last tick
	 * plus one tick: every event until the next tick gets one timestamp,
	 * and the order of two CPUs' events in that window is lost.
	 */
	if (sample->time && sample->time == last->time)
		rep->nr_same_time++;
	last->time = sample->time;
	/*
	 * Kept to compare with: the next sample of the CPU may be its copy.
	 * A file read through one mapping keeps its records there (and its
	 * decompressed ones in buffers) until the session ends; a pipe's and
	 * a windowed reader's are gone once delivered, so copy those.
	 */
	if (rep->session->one_mmap) {
		last->record = event;
		return false;
	}
	last->record = NULL;
	if (size > last->alloc) {
		union perf_event *more = realloc(last->copy, size);

		if (!more)
			return false;
		last->copy = more;
		last->alloc = size;
	}
	memcpy(last->copy, event, size);
	last->record = last->copy;
	return false;
}

/* ------------------------------------------------------------------ */
/* tracepoint handlers                                                 */

/* an allocation outside --time, --pid, --tid or --comm gets no verdict */
static bool rl_filtered(struct refleak_report *rep, struct perf_sample *sample)
{
	if (rep->range_num &&
	    perf_time__ranges_skip_sample(rep->ptime_range, rep->range_num, sample->time))
		return true;
	if (rep->pid_list && !intlist__has_entry(rep->pid_list, sample->pid))
		return true;
	if (rep->tid_list && !intlist__has_entry(rep->tid_list, sample->tid))
		return true;
	if (rep->comm_list) {
		struct thread *thread = machine__findnew_thread(&rep->session->machines.host,
								sample->pid, sample->tid);
		bool in = thread && strlist__has_entry(rep->comm_list, thread__comm_str(thread));

		thread__put(thread);
		if (!in)
			return true;
	}
	return false;
}

static int rl_on_alloc(struct refleak_report *rep, struct evsel *evsel,
		       const struct rl_evsel_info *info, struct perf_sample *sample)
{
	char name[256];
	struct refleak_alloc_ev ev = {
		.time		= sample->time,
		.ptr		= rl_field(evsel, info->ptr, sample),
		.call_site	= rl_field(evsel, info->call_site, sample),
		.bytes_alloc	= rl_field(evsel, info->bytes_alloc, sample),
		.cache		= info->kind == REFLEAK_EV_KMALLOC ? REFLEAK_KMALLOC :
				  rl_field_str(evsel, info->name, sample, name, sizeof(name)),
		.pid		= sample->pid,
		.tid		= sample->tid,
		.filtered	= rl_filtered(rep, sample),
	};

	if (ev.ptr)	/* no stack interning for failed allocations */
		ev.stack = rl_sample_stack(rep, sample);
	return refleak__alloc(rep->rl, &ev);
}

static int rl_on_free(struct refleak_report *rep, struct evsel *evsel,
		      const struct rl_evsel_info *info, struct perf_sample *sample)
{
	char name[256];
	struct refleak_free_ev ev = {
		.time		= sample->time,
		.ptr		= rl_field(evsel, info->ptr, sample),
		.call_site	= rl_field(evsel, info->call_site, sample),
		.cache		= info->kind != REFLEAK_EV_CACHE_FREE ? NULL :
				  rl_field_str(evsel, info->name, sample, name, sizeof(name)),
		.deferred	= info->kind == REFLEAK_EV_KFREE_RCU,
	};

	if (ev.ptr)
		ev.stack = rl_sample_stack(rep, sample);
	return refleak__free(rep->rl, &ev);
}

/* the counter type an event names, REFLEAK_COUNTER_UNKNOWN when it does not */
static enum refleak_counter rl_counter(struct evsel *evsel, const struct rl_evsel_info *info,
				       struct perf_sample *sample)
{
	u64 kind;

	if (!info->counter_kind)
		return REFLEAK_COUNTER_UNKNOWN;
	kind = rl_field(evsel, info->counter_kind, sample);
	return kind < RL_NR_KIND_VALUES ? info->counter_of[kind] : REFLEAK_COUNTER_UNKNOWN;
}

static int rl_on_final_put(struct refleak_report *rep, struct evsel *evsel,
			   const struct rl_evsel_info *info, struct perf_sample *sample)
{
	struct refleak_put_ev ev = {
		.time	= sample->time,
		.obj	= rl_field(evsel, info->ptr, sample),
		.caller	= rl_field(evsel, info->call_site, sample),
		.stack	= rl_sample_stack(rep, sample),
		.pid	= sample->pid,
	};

	return refleak__final_put(rep->rl, &ev);
}

static int rl_on_set(struct refleak_report *rep, struct evsel *evsel,
		     const struct rl_evsel_info *info, struct perf_sample *sample)
{
	struct refleak_set_ev ev = {
		.time	= sample->time,
		.obj	= rl_field(evsel, info->ptr, sample),
		.count	= rl_field_signed(evsel, info->value, sample),
		.caller	= rl_field(evsel, info->call_site, sample),
		.stack	= rl_sample_stack(rep, sample),
		.pid	= sample->pid,
	};

	return refleak__set(rep->rl, &ev);
}

static int rl_on_ref(struct refleak_report *rep, struct evsel *evsel,
		     const struct rl_evsel_info *info, struct perf_sample *sample)
{
	struct refleak_ref_ev ev = {
		.time	 = sample->time,
		.obj	 = rl_field(evsel, info->ptr, sample),
		.old	 = (s32)rl_field(evsel, info->value, sample),
		.delta	 = (s32)rl_field(evsel, info->delta, sample),
		.counter = rl_counter(evsel, info, sample),
		.caller	 = rl_field(evsel, info->call_site, sample),
		.stack	 = rl_sample_stack(rep, sample),
		.pid	 = sample->pid,
	};

	return refleak__ref(rep->rl, &ev);
}

static int rl_on_anomaly(struct refleak_report *rep, struct evsel *evsel,
			 const struct rl_evsel_info *info, struct perf_sample *sample)
{
	struct refleak_anomaly_ev ev = {
		.time	 = sample->time,
		.obj	 = rl_field(evsel, info->ptr, sample),
		.type	 = rl_field(evsel, info->value, sample),
		.counter = rl_counter(evsel, info, sample),
		.caller	 = rl_field(evsel, info->call_site, sample),
		.stack	 = rl_sample_stack(rep, sample),
	};

	ev.caller = refleak_stacks__user_frame(refleak__stacks(rep->rl), ev.stack, ev.caller);
	return refleak__anomaly(rep->rl, &ev);
}

typedef int (*rl_handler_t)(struct refleak_report *rep, struct evsel *evsel,
			    const struct rl_evsel_info *info, struct perf_sample *sample);

/* what 'record' does with an event, and what its absence means */
enum rl_need {
	RL_NEED_KMEM,		/* always recorded: cannot record without it */
	RL_NEED_OPTIONAL,	/* recorded when the kernel has it, else a warning */
	RL_NEED_LIFE,		/* unless --kmem-only: cannot record without it */
	RL_NEED_LIFE_OPTIONAL,	/* unless --kmem-only, when the kernel has it */
	RL_NEED_REFS,		/* with --refs, filtered on the cache */
	RL_NEED_READ,		/* not recorded: an older kernel's name, read */
};

/*
 * What perf refleak does with each kind of event of refleak-events.h:
 * 'record' turns the events into its -e arguments, 'report' into the
 * tracepoint handlers of its session.
 */
static const struct rl_kind {
	rl_handler_t	handler;
	enum rl_need	need;
	const char	*without;	/* what is lost on a kernel without it */
} rl_kinds[REFLEAK_EV_NR] = {
	[REFLEAK_EV_KMALLOC]	 = { rl_on_alloc,     RL_NEED_KMEM, NULL },
	[REFLEAK_EV_CACHE_ALLOC] = { rl_on_alloc,     RL_NEED_KMEM, NULL },
	[REFLEAK_EV_KFREE]	 = { rl_on_free,      RL_NEED_KMEM, NULL },
	[REFLEAK_EV_CACHE_FREE]	 = { rl_on_free,      RL_NEED_KMEM, NULL },
	[REFLEAK_EV_KFREE_RCU]	 = { rl_on_free,      RL_NEED_OPTIONAL,
	  "objects given to kfree_rcu() count as freed only when their free event comes, which can be after the recording",
	},
	[REFLEAK_EV_FINAL_PUT]	 = { rl_on_final_put, RL_NEED_LIFE, NULL },
	[REFLEAK_EV_SET]	 = { rl_on_set,	      RL_NEED_LIFE_OPTIONAL,
	  "only sites with a final put can be judged" },
	[REFLEAK_EV_ANOMALY]	 = { rl_on_anomaly,   RL_NEED_LIFE_OPTIONAL,
	  "refcount_t's own checks are not reported" },
	[REFLEAK_EV_REF]	 = { rl_on_ref,	      RL_NEED_REFS, NULL },
};

/* what record does with @ev: a kernel before 6.1's name is only read */
static enum rl_need rl_need_of(const struct refleak_event *ev)
{
	return ev->old_name ? RL_NEED_READ : rl_kinds[ev->kind].need;
}

static const struct refleak_event *rl_event_of(struct evsel *evsel)
{
	if (evsel->core.attr.type != PERF_TYPE_TRACEPOINT)
		return NULL;
	return refleak_event__find(evsel->name);
}

/* evsel->handler: the handler of its event, once the event's name is known */
static void rl_bind(struct evsel *evsel)
{
	const struct refleak_event *ev = rl_event_of(evsel);

	if (ev && !evsel->handler)
		evsel->handler = rl_kinds[ev->kind].handler;
}

/*
 * A pipe names its events in EVENT_UPDATE records, after their attrs and
 * before their samples: bind each event when its name arrives.
 */
static int process_event_update(const struct perf_tool *tool,
				union perf_event *event, struct evlist **pevlist)
{
	struct evsel *evsel;
	int err;

	err = perf_event__process_event_update(tool, event, pevlist);
	if (err)
		return err;
	evsel = evlist__id2evsel(*pevlist, event->event_update.id);
	if (evsel)
		rl_bind(evsel);
	return 0;
}

/*
 * The formats of the events come in the data of a pipe, and of a file cut
 * short (perf record --early-tracing-data): bind the events to their
 * handlers once their formats, and so their names, are known.
 */
static int process_tracing_data(const struct perf_tool *tool __maybe_unused,
				struct perf_session *session, union perf_event *event)
{
	struct evsel *evsel;
	int ret = perf_event__process_tracing_data(tool, session, event);

	if (ret > 0)
		evlist__for_each_entry(session->evlist, evsel)
			rl_bind(evsel);
	return ret;
}

/* the end of what perf record writes before the events */
static int process_finished_init(const struct perf_tool *tool,
				 struct perf_session *session __maybe_unused,
				 union perf_event *event __maybe_unused)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);

	rep->pipe_started = true;
	return 0;
}

/*
 * A pipe whose recording finished ends with its sample times: the feature
 * HEADER_SAMPLE_TIME again, after the events.  A pipe without it was cut
 * short.
 */
static int process_feature(const struct perf_tool *tool, struct perf_session *session,
			   union perf_event *event)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);

	if (event->feat.feat_id == HEADER_SAMPLE_TIME && rep->pipe_started)
		rep->pipe_ended = true;
	return perf_event__process_feature(tool, session, event);
}

/* the handlers of a file's events, known from its header */
static int rl_set_handlers(struct perf_session *session)
{
	struct evsel_str_handler assocs[refleak_nr_events];
	size_t i;

	for (i = 0; i < refleak_nr_events; i++) {
		assocs[i].name = refleak_events[i].name;
		assocs[i].handler = rl_kinds[refleak_events[i].kind].handler;
	}
	return __evlist__set_tracepoints_handlers(session->evlist, assocs,
						  refleak_nr_events);
}

static bool rl_is_bpf_event(struct evsel *evsel)
{
	return evsel__is_bpf_output(evsel) && evsel__name_is(evsel, REFLEAK_BPF_EVENT);
}

/* a -b recording's sums of balanced objects, what the kernel missed, and its end */
static int rl_on_bpf_record(struct refleak_report *rep, struct perf_sample *sample)
{
	const struct refleak_bpf_site_rec *rec = sample->raw_data;
	const struct refleak_bpf_misses_rec *misses = sample->raw_data;
	const struct refleak_bpf_end_rec *end = sample->raw_data;
	struct refleak_site_sum sum;
	char cache[RL_BPF_CACHE_NAME];
	u64 nr = 0;
	int i;

	if (sample->raw_size >= offsetof(typeof(*end), counting_ns) &&
	    end->type == REFLEAK_BPF_REC_END) {
		/* the objects written may all be older than the end, and the exits */
		if (sample->time > rep->last_time)
			rep->last_time = sample->time;
		if (sample->raw_size >= sizeof(*end) && end->counting_ns &&
		    end->counting_ns < sample->time)
			rep->bpf_counted_ns = sample->time - end->counting_ns;
		if (end->flags & REFLEAK_BPF_END_CHECKPOINT)
			rep->cut_short = "a checkpoint of a -b recording that went on";
		return 0;
	}
	if (sample->raw_size >= sizeof(*misses) && misses->type == REFLEAK_BPF_REC_MISSES) {
		rep->bpf_misses = *misses;
		for (i = 0; i < RL_BPF_NR_MISSES; i++)
			nr += misses->nr[i];
		/* the verdicts of objects alive then are uncertain, as with lost events */
		if (nr)
			refleak__lost(rep->rl, misses->first_ns, misses->last_ns, nr);
		return 0;
	}
	if (sample->raw_size < sizeof(*rec) || rec->type != REFLEAK_BPF_REC_SITE ||
	    rec->nr_ips > PERF_MAX_STACK_DEPTH ||
	    sample->raw_size < sizeof(*rec) + rec->nr_ips * sizeof(u64)) {
		rep->nr_bad_samples++;
		return 0;
	}
	memcpy(cache, rec->cache, sizeof(cache));
	cache[sizeof(cache) - 1] = '\0';
	sum = (struct refleak_site_sum){
		.call_site		= rec->call_site,
		.cache			= cache,
		.stack			= rec->nr_ips ? refleak__intern_stack(rep->rl, rec->ips,
									      rec->nr_ips) : 0,
		.nr_balanced		= rec->sum.nr_balanced,
		.nr_died		= rec->sum.nr_died,
		.died_first_ns		= rec->sum.died_first_ns,
		.died_last_ns		= rec->sum.died_last_ns,
		.max_life_ns		= rec->sum.max_life_ns,
		.nr_freed_after_zero	= rec->sum.nr_freed_after_zero,
		.nr_freed_live_ctr	= rec->sum.nr_freed_live_ctr,
		.nr_freed_all_zero	= rec->sum.nr_freed_all_zero,
		.max_freed_put_ns	= rec->sum.max_freed_put_ns,
		.max_put_free_ns	= rec->sum.max_put_free_ns,
		.put_offset		= rec->sum.put_offset,
		.nr_puts_at_offset	= rec->sum.nr_puts_at_offset,
	};
	rep->nr_bpf_sites++;
	rep->nr_bpf_balanced += rec->sum.nr_balanced;
	return refleak__site_sum(rep->rl, &sum);
}

/* the event the report could not take, and why: the reading stops there */
static void rl_event_error(struct evsel *evsel, struct perf_sample *sample, int err)
{
	char sbuf[STRERR_BUFSIZE];

	pr_err("perf refleak: cannot take the %s sample at %" PRIu64 ".%09" PRIu64 ": %s\n",
	       evsel__name(evsel), sample->time / NSEC_PER_SEC, sample->time % NSEC_PER_SEC,
	       str_error_r(-err, sbuf, sizeof(sbuf)));
}

static int process_sample_event(const struct perf_tool *tool,
				union perf_event *event,
				struct perf_sample *sample,
				struct machine *machine __maybe_unused)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);
	struct evsel *evsel = sample->evsel;
	const struct refleak_event *ev;
	struct rl_evsel_info *info;
	rl_handler_t handler;
	int err;

	if (!evsel)
		return 0;
	if (!evsel->handler) {
		/* -b's records come on the one event without a tracepoint handler */
		if (!rl_is_bpf_event(evsel))
			return 0;
		rep->bpf_recording = true;
		err = rl_on_bpf_record(rep, sample);
		if (err)
			rl_event_error(evsel, sample, err);
		return err;
	}
	info = evsel->priv;
	if (!info) {
		ev = rl_event_of(evsel);
		if (!ev)
			return 0;
		info = rl_evsel_info(evsel, ev);
		if (!info) {
			rl_event_error(evsel, sample, -ENOMEM);
			return -ENOMEM;
		}
	}
	if (info->kind == RL_EV_OTHER)
		return 0;
	if (!sample->raw_data || !sample->raw_size) {
		rep->nr_bad_samples++;
		return 0;
	}
	if (rl_note_sample(rep, event, sample)) {
		rep->nr_copies++;
		return 0;
	}
	rep->nr_events[info->kind]++;

	handler = evsel->handler;
	err = handler(rep, evsel, info, sample);
	if (err)
		rl_event_error(evsel, sample, err);
	return err;
}

/* lost records: the window is since the last sample of that CPU */
static void rl_note_lost(struct refleak_report *rep, struct perf_sample *sample, u64 nr)
{
	int cpu = (int)sample->cpu;
	u64 start = 0;

	if (sample->time && cpu >= 0 && cpu < rep->nr_cpu_last)
		start = rep->cpu_last[cpu].time;
	if (!start)
		start = rep->last_time;	/* nothing seen on that cpu yet */
	refleak__lost(rep->rl, sample->time ? start : 0, sample->time, nr);
}

static int process_lost_event(const struct perf_tool *tool, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine __maybe_unused)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);

	rl_note_lost(rep, sample, event->lost.lost);
	return 0;
}

static int process_lost_samples_event(const struct perf_tool *tool, union perf_event *event,
				      struct perf_sample *sample,
				      struct machine *machine __maybe_unused)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);

	rl_note_lost(rep, sample, event->lost_samples.lost);
	return 0;
}

/* a new process (not a thread): what its parent allocated before may be its own */
static int process_fork_event(const struct perf_tool *tool, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);

	if (event->fork.pid == event->fork.tid && event->fork.pid != event->fork.ppid &&
	    refleak__fork(rep->rl, event->fork.ppid, event->fork.pid, event->fork.time))
		return -ENOMEM;
	return perf_event__process_fork(tool, event, sample, machine);
}

/* a process's last thread exited: its objects may now be judged as leaks */
static int process_exit_event(const struct perf_tool *tool, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);

	if (event->fork.pid == event->fork.tid &&
	    refleak__exit(rep->rl, event->fork.pid, event->fork.time))
		return -ENOMEM;
	return perf_event__process_exit(tool, event, sample, machine);
}

static int process_finished_round(const struct perf_tool *tool, union perf_event *event,
				  struct ordered_events *oe)
{
	struct refleak_report *rep = container_of(tool, struct refleak_report, tool);

	/*
	 * A -b recording's samples come after its rounds, with the times of
	 * their events: the whole file is sorted before it is delivered.
	 */
	if (rep->bpf_recording)
		return 0;
	return perf_event__process_finished_round(tool, event, oe);
}

/* ------------------------------------------------------------------ */
/* symbols                                                             */

/* symbol of a kernel address, without offset when !offset: see rl_symbol_name() */
static const char *rl_frame_name(struct refleak_report *rep, u64 addr, bool offset,
				 char *buf, size_t size)
{
	const char *name = NULL;
	u64 start = 0;

	refleak_stacks__symbol(refleak__stacks(rep->rl), addr, &name, &start);
	return rl_symbol_name(name, start, addr, offset, buf, size);
}

static const char *rl_site_name(struct refleak_report *rep, const struct refleak_site *site,
				char *buf, size_t size)
{
	if (!site->call_site) {
		snprintf(buf, size, "[allocated before recording]");
		return buf;
	}
	return rl_frame_name(rep, site->call_site, true, buf, size);
}

/* ------------------------------------------------------------------ */
/* sorting                                                             */

/* descending order of two u64 */
static int rl_cmp_desc(u64 a, u64 b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int rl_sort_site(const struct refleak_finding *a, const struct refleak_finding *b)
{
	return strcmp(a->site, b->site);
}

static int rl_sort_count(const struct refleak_finding *a, const struct refleak_finding *b)
{
	return rl_cmp_desc(a->group->count, b->group->count);
}

static int rl_sort_bytes(const struct refleak_finding *a, const struct refleak_finding *b)
{
	return rl_cmp_desc(a->group->bytes, b->group->bytes);
}

static int rl_sort_age(const struct refleak_finding *a, const struct refleak_finding *b)
{
	return rl_cmp_desc(a->group->max_age_ns, b->group->max_age_ns);
}

/* sort dimensions, as in builtin-kmem.c: a list in the order given */
struct rl_sort_dimension {
	const char		*name;
	int			(*cmp)(const struct refleak_finding *a,
				       const struct refleak_finding *b);
	struct list_head	list;
};

static const struct rl_sort_dimension rl_sort_dimensions[] = {
	{ .name = "site",	.cmp = rl_sort_site, },
	{ .name = "count",	.cmp = rl_sort_count, },
	{ .name = "bytes",	.cmp = rl_sort_bytes, },
	{ .name = "age",	.cmp = rl_sort_age, },
};

static LIST_HEAD(rl_sort_list);

static void rl_sort_list__delete(void)
{
	struct rl_sort_dimension *sd, *tmp;

	list_for_each_entry_safe(sd, tmp, &rl_sort_list, list) {
		list_del(&sd->list);
		free(sd);
	}
}

static int rl_parse_sort(const char *str)
{
	char *tmp = strdup(str), *tok, *save = NULL;
	int ret = 0;

	if (!tmp)
		return -ENOMEM;
	rl_sort_list__delete();
	for (tok = strtok_r(tmp, ", ", &save); tok && !ret; tok = strtok_r(NULL, ", ", &save)) {
		struct rl_sort_dimension *sd = NULL;
		size_t i;

		for (i = 0; i < ARRAY_SIZE(rl_sort_dimensions); i++) {
			if (strcmp(tok, rl_sort_dimensions[i].name))
				continue;
			sd = memdup(&rl_sort_dimensions[i], sizeof(*sd));
			if (!sd)
				ret = -ENOMEM;
			break;
		}
		if (!sd && !ret) {
			pr_err("perf refleak: unknown sort key '%s' (site, count, bytes, age)\n",
			       tok);
			ret = -EINVAL;
		}
		if (sd)
			list_add_tail(&sd->list, &rl_sort_list);
	}
	free(tmp);
	if (!ret && list_empty(&rl_sort_list)) {
		pr_err("perf refleak: empty sort key list\n");
		ret = -EINVAL;
	}
	return ret;
}

/* the order of the sort keys given, 0 when they tie */
static int rl_finding_cmp(const struct refleak_finding *a, const struct refleak_finding *b)
{
	struct rl_sort_dimension *sd;
	int c = 0;

	list_for_each_entry(sd, &rl_sort_list, list) {
		c = sd->cmp(a, b);
		if (c)
			break;
	}
	return c;
}

static const char *rl_findings_site_name(void *ctx, const struct refleak_site *site,
					 char *buf, size_t size)
{
	return rl_site_name(ctx, site, buf, size);
}

static const struct refleak_finding *rl_findings_end(const struct refleak_report *rep)
{
	return rep->findings->entries + rep->findings->nr;
}

/* a finding is listed: definite and likely ones, possible ones with --all */
static bool rl_listed(struct refleak_report *rep, enum refleak_class class)
{
	return rep->all || refleak_class__tier(class) != REFLEAK_TIER_POSSIBLE;
}

/* ------------------------------------------------------------------ */
/* text output                                                         */

/* the first frame a reader needs: after the tracing, allocator and counting frames */
static u32 rl_first_frame(struct refleak_report *rep, const u64 *ips, u32 nr)
{
	return refleak_stacks__first_frame(refleak__stacks(rep->rl), ips, nr);
}

/*
 * Frame i of a leaf-first stack in the order asked for, after the noise
 * frames; in caller order (root first) a stack cut by --max-stack keeps
 * its frames nearest the leaf, as in callee order.
 */
static u64 rl_frame_at(const u64 *ips, u32 first, u32 nr, u32 i, u32 max_stack)
{
	u32 len = nr - first, skip = max_stack && len > max_stack ? len - max_stack : 0;

	return callchain_param.order == ORDER_CALLER ? ips[nr - 1 - skip - i] : ips[first + i];
}

/* stacks listed per group and kind, more with -v */
#define RL_MAX_TEXT_STACKS	10

/* the frames of a stack, one per line, in the order asked for */
static void rl_print_frames(struct refleak_report *rep, FILE *fp, u32 id)
{
	char buf[256];
	const u64 *ips;
	u32 nr, i, first, shown = 0;

	ips = refleak__stack(rep->rl, id, &nr);
	first = rl_first_frame(rep, ips, nr);
	for (i = 0; i < nr - first && (!rep->max_stack || shown < rep->max_stack); i++, shown++) {
		u64 ip = rl_frame_at(ips, first, nr, i, rep->max_stack);

		fprintf(fp, "            %s\n", rl_frame_name(rep, ip, true, buf, sizeof(buf)));
	}
	if (i < nr - first)
		fprintf(fp, "            ... %u more (--max-stack)\n", nr - first - i);
}

/* one stack, leaf first, one frame per line, as perf lock contention does */
static void rl_print_stack(struct refleak_report *rep, FILE *fp, u32 id, u64 count)
{
	fprintf(fp, "        %" PRIu64 " time%s:\n", count, count == 1 ? "" : "s");
	rl_print_frames(rep, fp, id);
}

/* stack 0 of a list of references never put */
#define RL_UNSEEN_GETS	"(before the recording, or by an untraced path)"

/* findings whose objects kept references: which gets were never put */
static bool rl_class_keeps_refs(enum refleak_class class)
{
	return class == REFLEAK_LIKELY_LEAK || class == REFLEAK_OUTSTANDING ||
	       class == REFLEAK_FREED_WITHOUT_FINAL_PUT;
}

/*
 * The largest kmalloc() a slab cache serves with 4 KiB pages
 * (KMALLOC_SHIFT_HIGH is PAGE_SHIFT + 1): larger ones come from the page
 * allocator, in no cache, and ref_trace_ref names no cache for them.
 */
#define RL_KMALLOC_MAX_CACHE_SIZE	8192

/*
 * The 'record --refs' argument that would trace a group's cache; a kmalloc
 * size class is read from the objects' size (kmalloc-<n>, or a kmalloc-cg-,
 * -rcl-, -rnd- variant: the glob takes them all).  From 1024 bytes on the
 * slab names the size in KiB (mm/slab_common.c: kmalloc-1k, kmalloc-cg-4k).
 * False: the objects are in no slab cache, which --refs cannot follow.
 */
static bool rl_refs_arg(struct refleak_group *g, char *buf, size_t size)
{
	const char *cache = g->site->cache ?: "?";
	u64 bytes = g->count && g->bytes % g->count == 0 ? g->bytes / g->count : 0;

	if (strcmp(cache, REFLEAK_KMALLOC))
		scnprintf(buf, size, "%s", cache);
	else if (bytes > RL_KMALLOC_MAX_CACHE_SIZE)
		return false;
	else if (bytes >= 1024 && bytes % 1024 == 0)
		scnprintf(buf, size, "'kmalloc-*%" PRIu64 "k'", bytes / 1024);
	else if (bytes)
		scnprintf(buf, size, "'kmalloc-*%" PRIu64 "'", bytes);
	else
		scnprintf(buf, size, "'kmalloc-*'");
	return true;
}

/*
 * References never put: per list of objects, the gets left after pairing
 * (certain), or every get that could own a missing put with its balance.
 */
static void rl_print_unput(struct refleak_report *rep, FILE *fp,
			   const struct refleak_finding *f)
{
	struct refleak_group *g = f->group;
	size_t nr = f->nr_unput, i;
	u32 s;
	char arg[128];

	/* the references are named by their stacks: nothing to say without them */
	if (!rl_class_keeps_refs(g->class) || g->site->no_alloc || !rep->has_callchain)
		return;
	if (!g->site->refs_traced) {
		fprintf(fp, "      which reference was never put: ");
		if (rl_refs_arg(g, arg, sizeof(arg)))
			fprintf(fp, "perf refleak record --refs %s\n", arg);
		else
			fprintf(fp, "--refs cannot follow them, no slab cache holds them\n");
		return;
	}
	if (!nr) {
		fprintf(fp, "      references never put: %s\n", g->nr_named ?
			"none left by the gets and puts seen (another counter?)" :
			"no get or put of these objects was recorded");
		return;
	}
	fprintf(fp, "      references never put (%" PRIu64 " of %" PRIu64 " objects followed):\n",
		g->nr_named, g->count);
	for (i = 0; i < nr && (i < RL_MAX_TEXT_STACKS || verbose > 0); i++) {
		struct refleak_unput *u = f->unput[i];

		fprintf(fp, "        %" PRIu64 " object%s, %u reference%s each never put, ",
			u->nr_objects, u->nr_objects == 1 ? "" : "s", u->refs,
			u->refs == 1 ? "" : "s");
		if (u->certain)
			fprintf(fp, "taken at:\n");
		else
			color_fprintf(fp, PERF_COLOR_YELLOW,
				      "not certain: %s\n", u->missing ? "events are missing" :
				      u->nr_stacks > 1 ? "one of these gets (balance per object)" :
				      "a put before it could not be paired for sure");
		for (s = 0; s < u->nr_stacks; s++) {
			if (!u->certain || u->nr_stacks > 1)
				fprintf(fp, "          %+" PRId64 ":\n", u->stacks[s].balance);
			if (!u->stacks[s].stack)
				fprintf(fp, "            %s\n", RL_UNSEEN_GETS);
			else if (rep->has_callchain)
				rl_print_frames(rep, fp, u->stacks[s].stack);
			if (u->stacks[s].merged)
				fprintf(fp, "%12s%s\n", "",
					"(and other stacks, same first three frames)");
		}
	}
	if (i < nr)
		fprintf(fp, "        ... %zu more (use -v)\n", nr - i);
}

/*
 * -g[mode,order]: perf report's syntax and modes (util/callchain.c), with
 * flat and callee order (leaf first) as the defaults.
 */
static int rl_parse_call_graph(const struct option *opt, const char *arg, int unset)
{
	struct refleak_report *rep = opt->value;

	rep->callchain = !unset;
	if (unset)
		return 0;
	callchain_param.mode = CHAIN_FLAT;
	callchain_param.order = ORDER_CALLEE;
	if (arg && parse_callchain_report_opt(arg))
		return -1;
	if (callchain_param.mode == CHAIN_NONE)
		rep->callchain = false;
	return 0;
}

/* -g graph: a group's stacks of one kind merged into a tree, common frames once */
struct rl_node {
	u64		ip;
	u64		count;
	struct rl_node	*child;		/* first child */
	struct rl_node	*next;		/* next sibling */
};

static void rl_node__delete(struct rl_node *n)
{
	while (n) {
		struct rl_node *next = n->next;

		rl_node__delete(n->child);
		free(n);
		n = next;
	}
}

static int rl_node__add(struct rl_node **head, const u64 *ips, u32 first, u32 nr, u32 depth,
			u64 count)
{
	u32 len = nr - first, i;

	for (i = 0; i < len && (!depth || i < depth); i++) {
		u64 ip = rl_frame_at(ips, first, nr, i, depth);
		struct rl_node *n;

		for (n = *head; n && n->ip != ip; n = n->next)
			;
		if (!n) {
			n = zalloc(sizeof(*n));
			if (!n)
				return -ENOMEM;
			n->ip = ip;
			n->next = *head;
			*head = n;
		}
		n->count += count;
		head = &n->child;
	}
	return 0;
}

/* siblings at one level; a chain of only children stays in its column */
static void rl_node__print(struct refleak_report *rep, FILE *fp, struct rl_node *n,
			   char *prefix, size_t plen, bool nested)
{
	char buf[256];

	for (; n; n = n->next) {
		bool last = !n->next, branch = nested || n->next;
		struct rl_node *c = n;
		size_t clen = plen;

		fprintf(fp, "        %.*s%s%" PRIu64 " %s\n", (int)plen, prefix,
			branch ? (last ? "`-- " : "|-- ") : "", n->count,
			rl_frame_name(rep, n->ip, true, buf, sizeof(buf)));
		if (branch && plen + 4 < 200) {
			memcpy(prefix + plen, last ? "    " : "|   ", 4);
			clen = plen + 4;
		}
		while (c->child && !c->child->next) {
			c = c->child;
			fprintf(fp, "        %.*s%*s%s\n", (int)clen, prefix,
				snprintf(NULL, 0, "%" PRIu64 " ", n->count), "",
				rl_frame_name(rep, c->ip, true, buf, sizeof(buf)));
		}
		rl_node__print(rep, fp, c->child, prefix, clen, true);
	}
}

static void rl_print_stacks_graph(struct refleak_report *rep, FILE *fp,
				  const struct refleak_stack_count *sc, size_t n)
{
	struct rl_node *root = NULL;
	char prefix[208];
	size_t i;

	for (i = 0; i < n; i++) {
		const u64 *ips;
		u32 nr;

		ips = refleak__stack(rep->rl, sc[i].id, &nr);
		if (rl_node__add(&root, ips, rl_first_frame(rep, ips, nr), nr, rep->max_stack,
				 sc[i].count))
			break;
	}
	rl_node__print(rep, fp, root, prefix, 0, false);
	rl_node__delete(root);
}

/* -g folded: a line per stack, the count first as perf report -g folded */
static void rl_print_stack_folded(struct refleak_report *rep, FILE *fp, u32 id, u64 count)
{
	char buf[256];
	const u64 *ips;
	u32 nr, first, i;

	ips = refleak__stack(rep->rl, id, &nr);
	first = rl_first_frame(rep, ips, nr);
	fprintf(fp, "        %" PRIu64 " ", count);
	for (i = 0; i < nr - first && (!rep->max_stack || i < rep->max_stack); i++) {
		u64 ip = rl_frame_at(ips, first, nr, i, rep->max_stack);

		fprintf(fp, "%s%s", i ? ";" : "", rl_frame_name(rep, ip, false, buf, sizeof(buf)));
	}
	fputc('\n', fp);
}

static void rl_print_stacks(struct refleak_report *rep, FILE *fp,
			    const struct refleak_finding *f)
{
	int k;

	for (k = 0; k < REFLEAK_NR_STACK_KINDS; k++) {
		const struct refleak_stack_count *sc = f->stacks[k];
		size_t n = f->nr_stacks[k], i;

		if (!sc)
			continue;
		fprintf(fp, "      %s stack%s (%zu distinct):\n", refleak_stack_kind__name(k),
			n == 1 ? "" : "s", n);
		if (callchain_param.mode == CHAIN_GRAPH_ABS ||
		    callchain_param.mode == CHAIN_GRAPH_REL) {
			rl_print_stacks_graph(rep, fp, sc, n);
			continue;
		}
		for (i = 0; i < n && (i < RL_MAX_TEXT_STACKS || verbose > 0); i++) {
			if (callchain_param.mode == CHAIN_FOLDED)
				rl_print_stack_folded(rep, fp, sc[i].id, sc[i].count);
			else
				rl_print_stack(rep, fp, sc[i].id, sc[i].count);
		}
		if (i < n)
			fprintf(fp, "        ... %zu more (use -v)\n", n - i);
	}
}

/*
 * --folded: one line per stack of every listed group, root first, function
 * names without offsets, the count last, as flamegraph.pl reads them; the
 * class and the stack kind are the two root frames.
 */
static int rl_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char * const *)a, *(const char * const *)b);
}

static size_t rl_line_hash(long key, void *ctx __maybe_unused)
{
	return str_hash((const char *)key);
}

static bool rl_line_equal(long a, long b, void *ctx __maybe_unused)
{
	return !strcmp((const char *)a, (const char *)b);
}

/*
 * Folded stacks, the interchange format of flamegraph.pl, inferno and
 * speedscope: "class;site;kind;root;...;leaf count", without offsets, so
 * that stacks differing only in offsets are one line (sorted, merged).
 */
static void rl_print_folded(struct refleak_report *rep, FILE *fp,
			    const struct refleak_finding *fd)
{
	struct hashmap *lines = hashmap__new(rl_line_hash, rl_line_equal, NULL);
	struct hashmap_entry *cur;
	const char **keys;
	size_t bkt, nr_keys = 0, i;
	int k;

	if (IS_ERR(lines))
		return;
	for (k = 0; k < REFLEAK_NR_STACK_KINDS; k++) {
		const struct refleak_stack_count *sc = fd->stacks[k];

		for (i = 0; i < fd->nr_stacks[k]; i++) {
			struct strbuf sb = STRBUF_INIT;
			char buf[256], *line;
			const u64 *ips;
			u32 nr, f, first;
			long count = 0;
			char *old = NULL;

			ips = refleak__stack(rep->rl, sc[i].id, &nr);
			first = rl_first_frame(rep, ips, nr);
			strbuf_addf(&sb, "%s;%s;%s", refleak_class__name(fd->class), fd->site,
				    refleak_stack_kind__name(k));
			for (f = nr; f > first; f--) {
				const char *name = rl_frame_name(rep, ips[f - 1], false,
								 buf, sizeof(buf));

				strbuf_addf(&sb, ";%s", name);
			}
			line = strbuf_detach(&sb, NULL);
			if (!line)
				continue;
			hashmap__find(lines, line, &count);
			/* the map keeps this line as the key, the one it replaces is freed */
			if (hashmap__set(lines, line, count + (long)sc[i].count, &old, NULL))
				free(line);
			else
				free(old);
			old = NULL;
		}
	}
	keys = calloc(hashmap__size(lines) + 1, sizeof(*keys));
	hashmap__for_each_entry(lines, cur, bkt)
		if (keys)
			keys[nr_keys++] = cur->pkey;
	if (keys) {
		qsort(keys, nr_keys, sizeof(*keys), rl_cmp_str);
		for (i = 0; i < nr_keys; i++) {
			long count = 0;

			hashmap__find(lines, keys[i], &count);
			fprintf(fp, "%s %ld\n", keys[i], count);
		}
	}
	free(keys);
	hashmap__for_each_entry(lines, cur, bkt)
		free((void *)cur->pkey);
	hashmap__free(lines);
}

static void rl_fmt_time(char *buf, size_t size, u64 ns)
{
	if (ns)
		snprintf(buf, size, "%" PRIu64 ".%06" PRIu64, ns / NSEC_PER_SEC,
			 (ns % NSEC_PER_SEC) / NSEC_PER_USEC);
	else
		snprintf(buf, size, "-");
}

/* "comm[pid]" or "comm[pid/tid]" of the allocating task, "" if unknown */
static void rl_fmt_task(struct refleak_report *rep, char *buf, size_t size,
			const struct refleak_object *o)
{
	struct thread *thread;

	buf[0] = '\0';
	if (o->pid <= 0)
		return;
	thread = machine__find_thread(&rep->session->machines.host, o->pid, o->tid);
	if (o->tid == o->pid)
		snprintf(buf, size, "%.15s[%d]", thread ? thread__comm_str(thread) : "?", o->pid);
	else
		snprintf(buf, size, "%.15s[%d/%d]", thread ? thread__comm_str(thread) : "?",
			 o->pid, o->tid);
	thread__put(thread);
}

static void rl_print_objects(struct refleak_report *rep, FILE *fp, struct refleak_group *g)
{
	u32 i;

	fprintf(fp, "      %-18s %6s %13s %13s %13s %10s  %s\n",
		"object", "size", "alloc", "put", "free", "age(ms)", "allocated by");
	for (i = 0; i < g->nr_objects; i++) {
		const struct refleak_object *o = &g->objects[i];
		char a[32], p[32], f[32], task[64];

		rl_fmt_time(a, sizeof(a), o->alloc_ns);
		rl_fmt_time(p, sizeof(p), o->put_ns);
		rl_fmt_time(f, sizeof(f), o->free_ns);
		rl_fmt_task(rep, task, sizeof(task), o);
		fprintf(fp, "      %#-18" PRIx64 " %6" PRIu64 " %13s %13s %13s %10.3f  %s%s%s\n",
			o->addr, o->size, a, p, f, (double)o->age_ns / NSEC_PER_MSEC, task,
			o->inferred ? "inferred" : "", o->uncertain ? " uncertain" : "");
	}
	if (g->objects_dropped)
		fprintf(fp, "      ... %" PRIu64 " more objects not kept\n", g->objects_dropped);
}

#define RL_TIMELINE_BUCKETS	40

/* classes whose objects are alive at the end: the ones a timeline shows */
static bool rl_class_is_live(enum refleak_class class)
{
	return class == REFLEAK_LIKELY_LEAK || class == REFLEAK_OUTSTANDING ||
	       class == REFLEAK_FINAL_PUT_NOT_FREED || class == REFLEAK_PUT_NOT_FREED_YET;
}

/*
 * A finding's objects alive at the end of each of RL_TIMELINE_BUCKETS
 * slices of the recording: a leak grows with the workload, objects in use
 * do not.  From the objects kept (up to the engine's per-group limit).
 */
static void rl_timeline(struct refleak_report *rep, struct refleak_group *g,
			u32 live[RL_TIMELINE_BUCKETS], u32 *max)
{
	const struct refleak_stats *st = refleak__stats(rep->rl);
	u64 span = st->last_ns > st->first_ns ? st->last_ns - st->first_ns : 1;
	u32 b, i;

	*max = 0;
	for (b = 0; b < RL_TIMELINE_BUCKETS; b++) {
		u64 t = st->first_ns + span * (b + 1) / RL_TIMELINE_BUCKETS;

		live[b] = 0;
		for (i = 0; i < g->nr_objects; i++) {
			const struct refleak_object *o = &g->objects[i];
			u64 from = o->alloc_ns ?: st->first_ns;

			if (from <= t && (!o->free_ns || o->free_ns > t))
				live[b]++;
		}
		if (live[b] > *max)
			*max = live[b];
	}
}

static void rl_print_timeline(struct refleak_report *rep, FILE *fp, struct refleak_group *g)
{
	/* U+2581..U+2588, lower eighth block to full block */
	static const char * const bars[] = {
		" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588",
	};
	u32 live[RL_TIMELINE_BUCKETS], max, b;

	rl_timeline(rep, g, live, &max);
	fprintf(fp, "      live: |");
	for (b = 0; b < RL_TIMELINE_BUCKETS; b++)
		fputs(bars[max ? (live[b] * 8 + max - 1) / max : 0], fp);
	fprintf(fp, "| %u at the end, at most %u%s\n", live[RL_TIMELINE_BUCKETS - 1], max,
		g->objects_dropped ? " (objects beyond the kept ones not drawn)" : "");
}

/* why a likely_leak row is likely: "      evidence: owner_exited 2, siblings_died 3" */
static void rl_print_evidence(FILE *fp, struct refleak_group *g)
{
	int ev, first = 1;

	for (ev = 0; ev < REFLEAK_NR_EVIDENCE; ev++) {
		if (!g->nr_evidence[ev])
			continue;
		fprintf(fp, "%s%s %" PRIu64, first ? "      evidence: " : ", ",
			refleak_evidence__name(ev), g->nr_evidence[ev]);
		first = 0;
	}
	if (!first)
		fputc('\n', fp);
}

/* the counter types of @mask, each in @fmt, separated by ", " */
static void rl_fprint_counters(FILE *fp, u8 mask, const char *fmt)
{
	int c, n = 0;

	for (c = 0; c < REFLEAK_NR_COUNTERS; c++) {
		if (!(mask & (1 << c)))
			continue;
		if (n++)
			fputs(", ", fp);
		fprintf(fp, fmt, refleak_counter__name(c));
	}
}

/* the counter types a finding's anomalies, gets and puts named */
static void rl_print_counters(FILE *fp, struct refleak_group *g)
{
	if (!g->counters)
		return;
	fputs("      counter: ", fp);
	rl_fprint_counters(fp, g->counters, "%s");
	fputc('\n', fp);
}

/* a class's title and column heads */
static void rl_print_class_head(struct refleak_report *rep, FILE *fp, enum refleak_class class)
{
	const struct refleak_stats *st = refleak__stats(rep->rl);
	char age[32];

	fputc('\n', fp);
	color_fprintf(fp, refleak_class__tier(class) == REFLEAK_TIER_POSSIBLE ?
		      PERF_COLOR_YELLOW : PERF_COLOR_RED, "%s", refleak_class__name(class));
	fprintf(fp, " [%s]: %" PRIu64 " %s, %s\n",
		refleak_tier__name(refleak_class__tier(class)), st->class_count[class],
		refleak_class__tier(class) == REFLEAK_TIER_DEFINITE &&
		class != REFLEAK_FINAL_PUT_NOT_FREED ? "events" : "objects",
		refleak_class__help(class));
	/* the site last, at its own width: rows stay within 100 columns */
	snprintf(age, sizeof(age), "%s (ms)", refleak_class__age(class));
	fprintf(fp, "  %6s %9s %15s %7s  %-22s %s\n", "Count", "Bytes", age, "RefOff", "Cache",
		"Site");
	fprintf(fp, "  %.6s %.9s %.15s %.7s  %.22s %.4s\n", graph_dotted_line, graph_dotted_line,
		graph_dotted_line, graph_dotted_line, graph_dotted_line, graph_dotted_line);
}

/* one finding: its row, then what the options ask for */
static void rl_print_finding(struct refleak_report *rep, FILE *fp,
			     const struct refleak_finding *f)
{
	struct refleak_group *g = f->group;
	char off[24];

	/* several offsets (a type with two counters): the most frequent, starred */
	if (g->site->offset_known)
		snprintf(off, sizeof(off), "0x%" PRIx64 "%s", g->site->ref_offset,
			 g->site->offset_mixed ? "*" : "");
	else
		snprintf(off, sizeof(off), "?");
	fprintf(fp, "  %6" PRIu64 " %9" PRIu64 " %15.3f %7s  %-22s %s", g->count, g->bytes,
		(double)g->max_age_ns / NSEC_PER_MSEC, off,
		g->site->no_alloc ? "(no allocation)" : g->site->cache ?: "?", f->site);
	if (g->nr_inferred)
		fprintf(fp, " [%" PRIu64 " inferred]", g->nr_inferred);
	if (g->nr_uncertain)
		color_fprintf(fp, PERF_COLOR_YELLOW, " [%" PRIu64 " uncertain]", g->nr_uncertain);
	fputc('\n', fp);
	if (f->class == REFLEAK_LIKELY_LEAK)
		rl_print_evidence(fp, g);
	rl_print_counters(fp, g);
	if (f->held_by)
		fprintf(fp, "    kept alive by the likely_leak objects at %s (%s):\n"
			"      the references never put here were taken where those are allocated\n",
			f->held_by->site, f->held_by->group->site->cache ?: "?");
	if (rep->timeline && rl_class_is_live(f->class))
		rl_print_timeline(rep, fp, g);
	if (rep->callchain)
		rl_print_stacks(rep, fp, f);
	rl_print_unput(rep, fp, f);
	if (rep->objects)
		rl_print_objects(rep, fp, g);
}

/* the listed classes in report order, each with its findings */
static void rl_print_findings(struct refleak_report *rep, FILE *fp)
{
	const struct refleak_stats *st = refleak__stats(rep->rl);
	const struct refleak_finding *f = rep->findings->entries;
	const struct refleak_finding *end = rl_findings_end(rep);
	int c;

	for (c = 0; c < REFLEAK_BALANCED; c++) {
		bool listed = rl_listed(rep, c) && st->class_count[c];

		if (listed)
			rl_print_class_head(rep, fp, c);
		for (; f < end && f->class == (enum refleak_class)c; f++)
			if (listed)
				rl_print_finding(rep, fp, f);
	}
}

/* report lines fit in this many columns; longer "# " lists wrap */
#define RL_COLUMNS	100

/*
 * "<head>k1 v1, k2 v2, ..." wrapped at RL_COLUMNS, continuation lines
 * indented "#   ".  Items with a zero value are left out when skip_zero.
 */
static void rl_print_list(FILE *fp, const char *head, const char * const *keys,
			  const u64 *vals, int n, bool skip_zero)
{
	int col, i, first = 1;

	col = fprintf(fp, "%s", head);
	for (i = 0; i < n; i++) {
		char item[96];
		int len;

		if (skip_zero && !vals[i])
			continue;
		len = scnprintf(item, sizeof(item), "%s%s %" PRIu64, first ? "" : ", ",
				keys[i], vals[i]);
		if (!first && col + len > RL_COLUMNS - 1) {
			fprintf(fp, ",\n#   ");
			col = 4;
			len = scnprintf(item, sizeof(item), "%s %" PRIu64, keys[i], vals[i]);
		}
		col += fprintf(fp, "%s", item);
		first = 0;
	}
	if (first)
		fprintf(fp, "none");
	fputc('\n', fp);
}

/*
 * Verdict first: the findings by tier and class, what limits them, and
 * what to run next.  The counters behind them go to the footer.
 */
/* the seconds between the first and the last event read */
static double rl_recorded_s(const struct refleak_stats *st)
{
	return st->last_ns > st->first_ns ?
	       (double)(st->last_ns - st->first_ns) / NSEC_PER_SEC : 0.0;
}

static void rl_print_header(struct refleak_report *rep, FILE *fp)
{
	const struct refleak_stats *st = refleak__stats(rep->rl);
	static const char * const tier_head[] = {
		[REFLEAK_TIER_DEFINITE]	= "#   definite  ",
		[REFLEAK_TIER_LIKELY]	= "#   likely    ",
		[REFLEAK_TIER_POSSIBLE]	= "#   possible  ",
	};
	enum refleak_tier t;
	int c;

	fprintf(fp, "# perf refleak report\n");
	if (rep->cut_short)
		color_fprintf(fp, PERF_COLOR_RED,
			      "# cut short: %s;\n#   verdicts cover its first %.3f s\n",
			      rep->cut_short, rl_recorded_s(st));
	fprintf(fp, "# findings: definite %" PRIu64 ", likely leaks %" PRIu64
		"; possible %" PRIu64 " (%s)\n", st->tier_count[REFLEAK_TIER_DEFINITE],
		st->tier_count[REFLEAK_TIER_LIKELY], st->tier_count[REFLEAK_TIER_POSSIBLE],
		rep->all ? "listed" : "listed with --all");
	for (t = 0; t < REFLEAK_TIER_NONE; t++) {
		const char *keys[REFLEAK_NR_CLASSES];
		u64 vals[REFLEAK_NR_CLASSES];
		int n = 0;

		if (!st->tier_count[t])
			continue;
		for (c = 0; c < REFLEAK_BALANCED; c++) {
			if (refleak_class__tier(c) != t)
				continue;
			keys[n] = refleak_class__name(c);
			vals[n++] = st->class_count[c];
		}
		rl_print_list(fp, tier_head[t], keys, vals, n, true);
	}
	if (rep->time_str || rep->pid_str || rep->tid_str || rep->comm_str)
		fprintf(fp, "# only objects allocated%s%s%s%s%s%s%s%s: %" PRIu64
			" others not judged\n",
			rep->time_str ? " in " : "", rep->time_str ?: "",
			rep->pid_str ? " by pid " : "", rep->pid_str ?: "",
			rep->tid_str ? " by tid " : "", rep->tid_str ?: "",
			rep->comm_str ? " by " : "", rep->comm_str ?: "", st->nr_filtered);
	if (st->nr_lost)
		color_fprintf(fp, PERF_COLOR_RED, "# lost events: %" PRIu64 " (%" PRIu64
			      " records); verdicts overlapping them are marked uncertain\n",
			      st->nr_lost, st->nr_lost_windows);
	else
		fprintf(fp, "# lost events: 0\n");
	if (!rep->has_put_event)
		color_fprintf(fp, PERF_COLOR_RED,
			      "# cannot show: final puts (no %s event: kernel without\n#   "
			      REFLEAK_KCONFIG " or 'record --kmem-only'): no verdict is possible\n",
			      REFLEAK_PUT_TP);
	else if (!rep->has_set_event)
		color_fprintf(fp, PERF_COLOR_YELLOW,
			      "# cannot show: counter births and anomalies (no %s event):\n"
			      "#   only sites with a final put are judged\n", REFLEAK_SET_TP);
	if (!rep->has_callchain)
		fprintf(fp, "# cannot show: call stacks (recorded without callchains, -g)\n");
	if (st->tier_count[REFLEAK_TIER_DEFINITE] + st->tier_count[REFLEAK_TIER_LIKELY] +
	    st->tier_count[REFLEAK_TIER_POSSIBLE])
		fprintf(fp, "# next:%s%s%s\n",
			rep->has_callchain && !rep->callchain ? " -g for the stacks," : "",
			!rep->objects ? " --objects for each object," : "",
			!rep->all ? " --all for the possible findings" : " --json for scripts");
}

/*
 * Whether the recording's kernel follows the counter type @kind ("file_ref",
 * "rcuref"): its ref_trace_set event names it among the values of its kind
 * field.  The footer says which counter types were not followed; a kernel
 * without their hooks does not name them.
 */
static bool rl_kernel_follows(struct refleak_report *rep, const char *kind)
{
	const struct tep_print_flag_sym *sym;
	const struct tep_print_arg *arg;
	const struct tep_event *tp;
	struct evsel *evsel;

	evlist__for_each_entry(rep->session->evlist, evsel) {
		const struct refleak_event *ev = rl_event_of(evsel);

		if (!ev || ev->kind != REFLEAK_EV_SET)
			continue;
		tp = evsel__tp_format(evsel);
		for (arg = tp ? tp->print_fmt.args : NULL; arg; arg = arg->next) {
			if (arg->type != TEP_PRINT_SYMBOL)
				continue;
			for (sym = arg->symbol.symbols; sym; sym = sym->next)
				if (sym->str && !strcmp(sym->str, kind))
					return true;
		}
	}
	return false;
}

/* what a -b recording's programs missed: the footer's words, the JSON's keys with '_' */
static const char * const rl_bpf_miss_names[RL_BPF_NR_MISSES] = {
	[RL_BPF_MISS_OBJECTS]	= "object map full",
	[RL_BPF_MISS_COUNTERS]	= "counter map full",
	[RL_BPF_MISS_LOG]	= "object log full",
	[RL_BPF_MISS_REPORTS]	= "report map full",
	[RL_BPF_MISS_SITES]	= "site map full",
	[RL_BPF_MISS_STACKS]	= "stacks lost",
	[RL_BPF_MISS_NESTED]	= "events not taken",
	[RL_BPF_MISS_PROCS]	= "process map full",
};

/* what the kernel kept of a -b recording, and what it missed */
static void rl_print_bpf_footer(struct refleak_report *rep, FILE *fp)
{
	const struct refleak_bpf_misses_rec *m = &rep->bpf_misses;

	if (rep->bpf_counted_ns)
		fprintf(fp, "# recorded with -b: counted in the kernel for the last %.3f s\n",
			(double)rep->bpf_counted_ns / NSEC_PER_SEC);
	fprintf(fp, "# recorded with -b: %" PRIu64
		" balanced objects summed in the kernel (%" PRIu64 " sites);"
		" counters born in no object followed: %" PRIu64 "\n",
		rep->nr_bpf_balanced, rep->nr_bpf_sites, m->nr_unplaced_sets);
	rl_print_list(fp, "# missed in the kernel: ", rl_bpf_miss_names, m->nr,
		      RL_BPF_NR_MISSES, true);
}

/* the counters the verdicts rest on, after the findings */
static void rl_print_footer(struct refleak_report *rep, FILE *fp, u64 min_age_ns)
{
	const struct refleak_stats *st = refleak__stats(rep->rl);
	const char *keys[REFLEAK_NR_CLASSES + 1];
	u64 vals[REFLEAK_NR_CLASSES + 1];
	int c, n;

	fprintf(fp, "\n# recording: %.3f s\n", rl_recorded_s(st));
	for (c = 0; c < REFLEAK_EV_NR; c++) {
		keys[c] = ev_names[c];
		vals[c] = rep->nr_events[c];
	}
	keys[c] = "process exits";
	vals[c] = st->nr_exits;
	rl_print_list(fp, "# events: ", keys, vals, REFLEAK_EV_NR + 1, false);
	n = 0;
	for (c = REFLEAK_BALANCED; c >= 0; c--) {
		keys[n] = refleak_class__name(c);
		vals[n++] = st->class_count[c];
	}
	rl_print_list(fp, "# objects: ", keys, vals, n, false);
	fprintf(fp, "# refcounted sites: %" PRIu64 " of %" PRIu64
		", objects of other sites (not judged): %" PRIu64 "\n",
		st->nr_refcounted_sites, st->nr_sites, st->nr_untracked);
	fprintf(fp, "# unmatched final puts: %" PRIu64
		" (no allocation seen: object allocated before the recording)\n",
		st->nr_unmatched_put);
	fprintf(fp, "# unmatched frees: %" PRIu64 ", ignored NULL/ERR_PTR allocations: %" PRIu64
		"\n", st->nr_unmatched_free, st->nr_ignored_alloc);
	fprintf(fp, "# counters set in no known allocation: %" PRIu64 ", revived: %" PRIu64 "\n",
		st->nr_unmatched_set, st->nr_revived);
	fprintf(fp, "# inferred: %" PRIu64 ", uncertain: %" PRIu64
		", put < %.0f ms before the end, not freed yet: %" PRIu64 "\n",
		st->nr_inferred, st->nr_uncertain, (double)min_age_ns / NSEC_PER_MSEC,
		st->nr_pending_free);
	/*
	 * The counter types without ref_trace events: an object counted only
	 * by one of them has no counter event, its site is not judged, and a
	 * leak of it is not found.  Said on every report, so that "no finding"
	 * is not read as "no leak" for them.
	 */
	fprintf(fp,
		"# counters not followed: %s%satomic_t, lockref (objects only they count are not judged)\n",
		rl_kernel_follows(rep, "file_ref") ? "" : "file_ref_t, ",
		rl_kernel_follows(rep, "rcuref") ? "" : "rcuref_t, ");
	if (st->nr_held_by_running)
		fprintf(fp, "# live objects held by running processes only: %" PRIu64
			" (not judged by their lifetime)\n", st->nr_held_by_running);
	if (st->nr_rcu_requests)
		fprintf(fp, "# kfree_rcu requests: %" PRIu64
			" (counted as frees), their frees seen: %" PRIu64 "\n",
			st->nr_rcu_requests, st->nr_rcu_freed);
	if (st->nr_missed_free)
		fprintf(fp, "# addresses reallocated without a free event: %" PRIu64 "\n",
			st->nr_missed_free);
	if (st->nr_out_of_order)
		fprintf(fp, "# events out of time order: %" PRIu64 "\n", st->nr_out_of_order);
	if (rep->nr_bad_samples)
		fprintf(fp, "# samples without their tracepoint data (ignored): %" PRIu64 "\n",
			rep->nr_bad_samples);
	if (rep->nr_copies)
		fprintf(fp, "# copies of their CPU's previous sample (dropped): %" PRIu64 "\n",
			rep->nr_copies);
	if (rep->nr_same_time)
		fprintf(fp, "# samples with their CPU's previous timestamp: %" PRIu64 "%s\n",
			rep->nr_same_time,
			" (the kernel's clock stood still: the order of events of different CPUs is not known there)");
	if (rep->bpf_recording)
		rl_print_bpf_footer(rep, fp);
}

/* ------------------------------------------------------------------ */
/* JSON output                                                         */

/* what the footer says of a -b recording */
static void rl_print_bpf_json(struct refleak_report *rep, FILE *fp)
{
	const struct refleak_bpf_misses_rec *m = &rep->bpf_misses;
	const char *c;
	int i;

	fprintf(fp, "  \"bpf\": {\"counted_s\": %.3f, \"balanced_objects\": %" PRIu64
		", \"sites\": %" PRIu64 ", \"unplaced_counters\": %" PRIu64 ", \"missed\": {",
		(double)rep->bpf_counted_ns / NSEC_PER_SEC, rep->nr_bpf_balanced,
		rep->nr_bpf_sites, m->nr_unplaced_sets);
	for (i = 0; i < RL_BPF_NR_MISSES; i++) {
		fputs(i ? ", \"" : "\"", fp);
		for (c = rl_bpf_miss_names[i]; *c; c++)
			fputc(*c == ' ' ? '_' : *c, fp);
		fprintf(fp, "\": %" PRIu64, m->nr[i]);
	}
	fprintf(fp, "}},\n");
}

static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(fp, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(fp, "\\u%04x", ch);
		else
			fputc(ch, fp);
	}
	fputc('"', fp);
}

static void json_stacks(struct refleak_report *rep, FILE *fp, const struct refleak_finding *fd)
{
	int k;

	fprintf(fp, ", \"stacks\": {");
	for (k = 0; k < REFLEAK_NR_STACK_KINDS; k++) {
		const struct refleak_stack_count *sc = fd->stacks[k];
		size_t n = fd->nr_stacks[k], i;

		fprintf(fp, "%s\"%s\": [", k ? ", " : "", refleak_stack_kind__name(k));
		for (i = 0; i < n; i++) {
			const u64 *ips;
			u32 nr, f;
			char buf[256];

			ips = refleak__stack(rep->rl, sc[i].id, &nr);
			fprintf(fp, "%s{\"count\": %" PRIu64 ", \"frames\": [", i ? ", " : "",
				sc[i].count);
			for (f = 0; f < nr; f++) {
				if (f)
					fprintf(fp, ", ");
				json_str(fp, rl_frame_name(rep, ips[f], true, buf, sizeof(buf)));
			}
			fprintf(fp, "]}");
		}
		fprintf(fp, "]");
	}
	fprintf(fp, "}");
}

static void json_frames(struct refleak_report *rep, FILE *fp, u32 id)
{
	const u64 *ips;
	u32 nr = 0, f;
	char buf[256];

	ips = id ? refleak__stack(rep->rl, id, &nr) : NULL;
	fprintf(fp, "[");
	for (f = 0; ips && f < nr; f++) {
		if (f)
			fprintf(fp, ", ");
		json_str(fp, rl_frame_name(rep, ips[f], true, buf, sizeof(buf)));
	}
	fprintf(fp, "]");
}

/* the references never put, as rl_print_unput() shows them */
static void json_unput(struct refleak_report *rep, FILE *fp, const struct refleak_finding *f)
{
	struct refleak_group *g = f->group;
	size_t i;
	u32 s;
	char arg[128];

	if (!rl_class_keeps_refs(g->class) || g->site->no_alloc)
		return;
	if (!g->site->refs_traced) {
		fprintf(fp, ", \"refs_traced\": false, \"refs_record\": ");
		if (rl_refs_arg(g, arg, sizeof(arg)))
			json_str(fp, arg);
		else
			fprintf(fp, "null");
		return;
	}
	fprintf(fp, ", \"refs_traced\": true, \"refs_followed\": %" PRIu64 ", \"unput\": [",
		g->nr_named);
	for (i = 0; i < f->nr_unput; i++) {
		struct refleak_unput *u = f->unput[i];

		fprintf(fp, "%s{\"objects\": %" PRIu64 ", \"refs\": %u, \"certain\": %s",
			i ? ", " : "", u->nr_objects, u->refs, u->certain ? "true" : "false");
		fprintf(fp, ", \"gets\": [");
		for (s = 0; s < u->nr_stacks; s++) {
			fprintf(fp, "%s{\"balance\": %" PRId64 ", \"merged\": %s, \"frames\": ",
				s ? ", " : "", u->stacks[s].balance,
				u->stacks[s].merged ? "true" : "false");
			json_frames(rep, fp, u->stacks[s].stack);
			fprintf(fp, "}");
		}
		fprintf(fp, "]}");
	}
	fprintf(fp, "]");
}

static void json_objects(struct refleak_report *rep, FILE *fp, struct refleak_group *g)
{
	u32 i;

	fprintf(fp, ", \"objects\": [");
	for (i = 0; i < g->nr_objects; i++) {
		const struct refleak_object *o = &g->objects[i];
		struct thread *thread = o->pid > 0 ?
			machine__find_thread(&rep->session->machines.host, o->pid, o->tid) : NULL;

		fprintf(fp, "%s{\"pid\": %d, \"tid\": %d, \"comm\": ", i ? ", " : "",
			o->pid > 0 ? o->pid : -1, o->pid > 0 ? o->tid : -1);
		json_str(fp, thread ? thread__comm_str(thread) : "");
		thread__put(thread);
		fprintf(fp, ", \"addr\": \"%#" PRIx64 "\", \"size\": %" PRIu64
			", \"alloc_ns\": %" PRIu64 ", \"put_ns\": %" PRIu64
			", \"free_ns\": %" PRIu64
			", \"age_ms\": %.3f, \"inferred\": %s, \"uncertain\": %s}",
			o->addr, o->size, o->alloc_ns, o->put_ns, o->free_ns,
			(double)o->age_ns / NSEC_PER_MSEC, o->inferred ? "true" : "false",
			o->uncertain ? "true" : "false");
	}
	fprintf(fp, "]");
}

/* ", \"evidence\": {\"owner_exited\": 3, ...}": objects each evidence holds for */
static void json_evidence(FILE *fp, struct refleak_group *g)
{
	int ev;

	fprintf(fp, ", \"evidence\": {");
	for (ev = 0; ev < REFLEAK_NR_EVIDENCE; ev++)
		fprintf(fp, "%s\"%s\": %" PRIu64, ev ? ", " : "", refleak_evidence__name(ev),
			g->nr_evidence[ev]);
	fprintf(fp, "}");
}

static void json_timeline(struct refleak_report *rep, FILE *fp, struct refleak_group *g)
{
	u32 live[RL_TIMELINE_BUCKETS], max, b;

	rl_timeline(rep, g, live, &max);
	fprintf(fp, ", \"timeline\": [");
	for (b = 0; b < RL_TIMELINE_BUCKETS; b++)
		fprintf(fp, "%s%u", b ? ", " : "", live[b]);
	fprintf(fp, "]");
}

static void json_finding(struct refleak_report *rep, FILE *fp, const struct refleak_finding *f)
{
	struct refleak_group *g = f->group;

	fprintf(fp, "{\"class\": \"%s\", \"tier\": \"%s\", \"site\": ",
		refleak_class__name(f->class), refleak_tier__name(f->tier));
	json_str(fp, f->site);
	fprintf(fp, ", \"call_site\": \"%#" PRIx64 "\", \"cache\": ", g->site->call_site);
	json_str(fp, g->site->no_alloc ? "" : g->site->cache ?: "?");
	fprintf(fp, ", \"count\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"max_age_ms\": %.3f",
		g->count, g->bytes, (double)g->max_age_ns / NSEC_PER_MSEC);
	fprintf(fp, ", \"ref_offset\": %" PRId64 ", \"ref_offset_mixed\": %s",
		g->site->offset_known ? (s64)g->site->ref_offset : (s64)-1,
		g->site->offset_mixed ? "true" : "false");
	fprintf(fp, ", \"inferred\": %" PRIu64 ", \"uncertain\": %" PRIu64,
		g->nr_inferred, g->nr_uncertain);
	if (f->class == REFLEAK_LIKELY_LEAK)
		json_evidence(fp, g);
	if (g->counters) {
		fprintf(fp, ", \"counters\": [");
		rl_fprint_counters(fp, g->counters, "\"%s\"");
		fprintf(fp, "]");
	}
	if (f->held_by) {
		fprintf(fp, ", \"held_by\": {\"site\": ");
		json_str(fp, f->held_by->site);
		fprintf(fp, ", \"cache\": ");
		json_str(fp, f->held_by->group->site->cache ?: "?");
		fprintf(fp, "}");
	}
	if (rep->has_callchain)
		json_stacks(rep, fp, f);
	json_unput(rep, fp, f);
	json_objects(rep, fp, g);
	if (rep->timeline && rl_class_is_live(f->class))
		json_timeline(rep, fp, g);
	fprintf(fp, "}");
}

/* the summary's counters, then each listed finding once */
static void rl_print_json(struct refleak_report *rep, FILE *fp)
{
	const struct refleak_stats *st = refleak__stats(rep->rl);
	const struct refleak_finding *f;
	int c, first = 1, nr_cannot = 0;
	const char *cannot[2];

	fprintf(fp, "{\"version\": 2,\n \"summary\": {\"recording_s\": %.3f, \"cut_short\": %s, ",
		rl_recorded_s(st), rep->cut_short ? "true" : "false");
	fprintf(fp, "\"events\": {");
	for (c = 0; c < REFLEAK_EV_NR; c++)
		fprintf(fp, "%s\"%s\": %" PRIu64, c ? ", " : "", ev_names[c], rep->nr_events[c]);
	fprintf(fp, "},\n  \"lost_events\": %" PRIu64 ", \"unmatched_final_puts\": %" PRIu64
		", \"inferred_objects\": %" PRIu64 ", \"uncertain_objects\": %" PRIu64
		", \"same_time_samples\": %" PRIu64 ", \"copied_samples\": %" PRIu64 ",\n",
		st->nr_lost, st->nr_unmatched_put, st->nr_inferred, st->nr_uncertain,
		rep->nr_same_time, rep->nr_copies);
	/* what "no finding" does not cover, as the text's header and footer say */
	if (!rep->has_put_event)
		cannot[nr_cannot++] = "final_puts";
	else if (!rep->has_set_event)
		cannot[nr_cannot++] = "counter_births";
	if (!rep->has_callchain)
		cannot[nr_cannot++] = "call_stacks";
	fprintf(fp, "  \"cannot_show\": [");
	for (c = 0; c < nr_cannot; c++)
		fprintf(fp, "%s\"%s\"", c ? ", " : "", cannot[c]);
	fprintf(fp, "], ");
	fprintf(fp, "\"counters_not_followed\": [%s%s\"atomic_t\", \"lockref\"],\n",
		rl_kernel_follows(rep, "file_ref") ? "" : "\"file_ref_t\", ",
		rl_kernel_follows(rep, "rcuref") ? "" : "\"rcuref_t\", ");
	if (rep->bpf_recording)
		rl_print_bpf_json(rep, fp);
	fprintf(fp, "  \"classes\": {");
	for (c = 0; c < REFLEAK_NR_CLASSES; c++)
		fprintf(fp, "%s\"%s\": %" PRIu64, c ? ", " : "", refleak_class__name(c),
			st->class_count[c]);
	fprintf(fp, "},\n  \"tiers\": {");
	for (c = 0; c < REFLEAK_TIER_NONE; c++)
		fprintf(fp, "%s\"%s\": %" PRIu64, c ? ", " : "", refleak_tier__name(c),
			st->tier_count[c]);
	fprintf(fp, "}},\n \"findings\": [");
	for (f = rep->findings->entries; f < rl_findings_end(rep); f++) {
		if (!rl_listed(rep, f->class))
			continue;
		fprintf(fp, "%s\n  ", first ? "" : ",");
		json_finding(rep, fp, f);
		first = 0;
	}
	fprintf(fp, "%s]\n}\n", first ? "" : "\n ");
}

/* ------------------------------------------------------------------ */
/* report                                                              */

static int rl_check_file(struct refleak_report *rep)
{
	struct perf_session *session = rep->session;
	struct perf_data *data = session->data;
	struct stat st;
	u64 end;

	if (perf_data__is_pipe(data))
		return 0;
	if (fstat(perf_data__fd(data), &st) < 0) {
		pr_err("perf refleak: cannot stat %s: %m\n", data->path);
		return -1;
	}
	/* perf record writes the data size when it finishes: read what there is */
	if (!session->header.data_size) {
		rep->cut_short = "its recorder did not finish the file (killed, or its disk full)";
		return 0;
	}
	end = session->header.data_offset + session->header.data_size;
	if (end > (u64)st.st_size) {
		pr_err("perf refleak: %s is truncated: header says %" PRIu64
		       " bytes of data, file has %" PRIu64 "\n", data->path,
		       session->header.data_size,
		       (u64)st.st_size > session->header.data_offset ?
		       (u64)st.st_size - session->header.data_offset : 0);
		return -1;
	}
	return 0;
}

static bool rl_scan_evlist(struct refleak_report *rep)
{
	struct evsel *evsel;

	evlist__for_each_entry(rep->session->evlist, evsel) {
		const struct refleak_event *ev = rl_event_of(evsel);

		if (!ev)
			continue;
		switch (ev->kind) {
		case REFLEAK_EV_FINAL_PUT:
			rep->has_put_event = true;
			break;
		case REFLEAK_EV_SET:
			rep->has_set_event = true;
			break;
		case REFLEAK_EV_KMALLOC:
		case REFLEAK_EV_CACHE_ALLOC:
		case REFLEAK_EV_KFREE:
		case REFLEAK_EV_CACHE_FREE:
		case REFLEAK_EV_KFREE_RCU:
			rep->has_kmem_event = true;
			break;
		case REFLEAK_EV_ANOMALY:	/* the anomaly event says nothing of the others */
		case REFLEAK_EV_REF:
		case RL_EV_OTHER:
		default:
			break;
		}
		if (evsel->core.attr.sample_type & PERF_SAMPLE_CALLCHAIN)
			rep->has_callchain = true;
	}
	evlist__for_each_entry(rep->session->evlist, evsel)
		if (rl_is_bpf_event(evsel))
			rep->bpf_recording = true;
	return rep->has_kmem_event;
}

/*
 * The caches a recording followed with every get and put: the filter of
 * ref_trace_ref on the command line perf record keeps in the header
 * ('record --refs' gives one 'cache ~ "<glob>"' per cache; a filter
 * written by hand may use ==).  A counter of such a cache that took no
 * get and no put between its birth and the end has no event of its own
 * to say that it was followed.  In a pipe the header comes with the
 * events, after this: the report then knows the caches by their events
 * alone.
 */
static int rl_refs_recorded(struct refleak_report *rep)
{
	static const char * const ops[] = { "cache ~ \"", "cache == \"" };
	struct perf_env *env = perf_session__env(rep->session);
	int i, err = 0;
	size_t o;

	for (i = 0; env && i + 3 < env->nr_cmdline && !err; i++) {
		const char * const *arg = env->cmdline_argv + i;

		if (strcmp(arg[0], "-e") || strcmp(arg[1], REFLEAK_REF_TP) ||
		    strcmp(arg[2], "--filter"))
			continue;
		for (o = 0; o < ARRAY_SIZE(ops) && !err; o++) {
			const char *p = arg[3], *end;
			char *glob;

			while (!err && (p = strstr(p, ops[o])) != NULL) {
				p += strlen(ops[o]);
				end = strchr(p, '"');
				if (!end)
					break;
				glob = strndup(p, end - p);
				err = glob ? refleak__refs_recorded(rep->rl, glob) : -ENOMEM;
				free(glob);
				p = end + 1;
			}
		}
	}
	return err;
}

/*
 * record -b's checkpoints: perf record finishes the output at each one,
 * renames it <output>.<timestamp> (removing the one before) and starts the
 * output anew, whose header it writes when it finishes.  An output whose
 * header is still blank, written to since the last checkpoint, was cut
 * short after it: that checkpoint is what the recording left.
 */
static char *rl_last_checkpoint(const char *path)
{
	char magic[8], *dir_buf, *base_buf, *best = NULL, *found = NULL;
	const char *dir, *base;
	struct stat in, st;
	struct dirent *d;
	size_t len;
	DIR *dp;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	/* empty, or its header not written: killed before or after its first write */
	if (fstat(fd, &in) || !S_ISREG(in.st_mode) ||
	    (in.st_size && (readn(fd, magic, sizeof(magic)) != sizeof(magic) ||
			    memchr_inv(magic, 0, sizeof(magic))))) {
		close(fd);
		return NULL;
	}
	close(fd);

	dir_buf = strdup(path);
	base_buf = strdup(path);
	dp = dir_buf && base_buf ? opendir(dir = dirname(dir_buf)) : NULL;
	base = base_buf ? basename(base_buf) : NULL;
	len = base ? strlen(base) : 0;
	while (dp && (d = readdir(dp)) != NULL) {
		const char *stamp = d->d_name + len + 1;

		if (strncmp(d->d_name, base, len) || d->d_name[len] != '.' ||
		    strlen(stamp) < 14 || strspn(stamp, "0123456789") != strlen(stamp))
			continue;
		if (!best || strcmp(d->d_name, best) > 0) {
			free(best);
			best = strdup(d->d_name);
		}
	}
	if (dp)
		closedir(dp);
	if (best && asprintf(&found, "%s/%s", dir, best) < 0)
		found = NULL;
	/* one of an earlier recording: older than what the output was written */
	if (found && (stat(found, &st) || st.st_mtime > in.st_mtime))
		zfree(&found);
	free(best);
	free(dir_buf);
	free(base_buf);
	return found;
}

/*
 * Open the input and get ready to read it: perf's checks of the file, the
 * tracepoint handlers, symbols, the filters.  0 or an exit status.
 */
static int rl_report_open(struct refleak_report *rep, struct perf_data *data)
{
	/* ordered events: the CPUs' ring buffers are merged in time order */
	perf_tool__init(&rep->tool, /*ordered_events=*/true);
	rep->tool.sample	 = process_sample_event;
	rep->tool.lost		 = process_lost_event;
	rep->tool.lost_samples	 = process_lost_samples_event;
	rep->tool.mmap		 = perf_event__process_mmap;
	rep->tool.mmap2		 = perf_event__process_mmap2;
	rep->tool.comm		 = perf_event__process_comm;
	rep->tool.fork		 = process_fork_event;
	rep->tool.exit		 = process_exit_event;
	rep->tool.ksymbol	 = perf_event__process_ksymbol;
	rep->tool.attr		 = perf_event__process_attr;
	rep->tool.event_update	 = process_event_update;
	rep->tool.tracing_data	 = process_tracing_data;
	rep->tool.feature	 = process_feature;
	rep->tool.finished_init	 = process_finished_init;
	rep->tool.build_id	 = perf_event__process_build_id;
	rep->tool.finished_round = process_finished_round;
	/*
	 * The report says itself what the session's counters mean for its
	 * verdicts (lost, out of order and unknown records): not perf's
	 * summary of them too.
	 */
	rep->tool.no_warn	 = true;

	if (!rep->input_name) {
		struct stat in;

		rep->input_name = !fstat(STDIN_FILENO, &in) && S_ISFIFO(in.st_mode) ?
				  "-" : "perf.data";
	}
	if (strcmp(rep->input_name, "-")) {
		char *checkpoint = rl_last_checkpoint(rep->input_name);
		struct stat sb;

		if (checkpoint) {
			pr_warning("perf refleak: %s was cut short after a checkpoint: reading %s\n",
				   rep->input_name, checkpoint);
			rep->checkpoint_name = checkpoint;
			rep->input_name = checkpoint;
		}

		if (stat(rep->input_name, &sb) < 0) {
			pr_err("perf refleak: cannot open %s: %s\n", rep->input_name,
			       strerror(errno));
			return RL_EXIT_FATAL;
		}
		if (S_ISREG(sb.st_mode) && sb.st_size == 0) {
			pr_err("perf refleak: %s is empty\n", rep->input_name);
			return RL_EXIT_FATAL;
		}
	}

	data->path = rep->input_name;
	data->force = rep->force;
	/* perf says why it cannot open the file (owner, size, format) */
	rep->session = perf_session__new(data, &rep->tool);
	if (IS_ERR(rep->session)) {
		pr_err("perf refleak: cannot read '%s': not a perf.data file, or truncated/corrupt\n",
		       rep->input_name);
		rep->session = NULL;
		return RL_EXIT_FATAL;
	}
	/* the report's state follows the live objects: delivered input can go */
	rep->session->release_delivered = true;

	if (rl_check_file(rep))
		return RL_EXIT_FATAL;
	/* a pipe's events, and a file's cut short, are known once read */
	if (!perf_data__is_pipe(data) && !rep->cut_short &&
	    !perf_session__has_traces(rep->session, "refleak record"))
		return RL_EXIT_FATAL;
	if (!perf_data__is_pipe(data) && !rep->cut_short &&
	    rl_set_handlers(rep->session)) {
		pr_err("perf refleak: cannot set the tracepoint handlers\n");
		return RL_EXIT_FATAL;
	}
	if (!perf_data__is_pipe(data) && !rep->cut_short && !rl_scan_evlist(rep)) {
		pr_err("perf refleak: %s has no kmem:kmalloc/kmem_cache_alloc/kfree/kmem_cache_free events; record it with 'perf refleak record'\n",
		       rep->input_name);
		return RL_EXIT_FATAL;
	}

	/* the comm of tasks that allocated and exited, for the object listing */
	symbol_conf.keep_exited_threads = true;
	symbol__init(perf_session__env(rep->session));
	if (rl_refs_recorded(rep)) {
		pr_err("perf refleak: out of memory reading the caches 'record --refs' followed\n");
		return RL_EXIT_FATAL;
	}

	/* filters: the events outside are still read, or the correlation breaks */
	if (rep->time_str && perf_time__parse_for_ranges(rep->time_str, rep->session,
							 &rep->ptime_range, &rep->range_size,
							 &rep->range_num) < 0) {
		pr_err("perf refleak: invalid --time '%s'\n", rep->time_str);
		return RL_EXIT_USAGE;
	}
	if (rep->pid_str)
		rep->pid_list = intlist__new(rep->pid_str);
	if (rep->tid_str)
		rep->tid_list = intlist__new(rep->tid_str);
	if (rep->comm_str)
		rep->comm_list = strlist__new(rep->comm_str, NULL);
	if ((rep->pid_str && !rep->pid_list) || (rep->tid_str && !rep->tid_list) ||
	    (rep->comm_str && !rep->comm_list)) {
		pr_err("perf refleak: invalid --pid, --tid or --comm list\n");
		return RL_EXIT_USAGE;
	}

	return 0;
}

/* Read every event, then check the input was whole. */
static int rl_report_read(struct refleak_report *rep, struct perf_data *data)
{
	struct events_stats *es;
	int err;

	err = perf_session__process_events(rep->session);
	if (err) {
		pr_err("perf refleak: error while reading events from %s (%d): %s\n",
		       rep->input_name, err, rep->cut_short ?
		       "recording cut short before its events could be read" :
		       "file truncated or corrupt");
		return RL_EXIT_FATAL;
	}
	es = evlist__stats(rep->session->evlist);
	if (es->nr_unknown_id || es->nr_unprocessable_samples) {
		pr_err("perf refleak: %s is corrupt: %u samples of unknown events, %u unprocessable samples\n",
		       rep->input_name, es->nr_unknown_id, es->nr_unprocessable_samples);
		return RL_EXIT_FATAL;
	}
	/* the session skips them, as a newer perf's records: say how many */
	if (es->nr_unknown_events)
		pr_warning("perf refleak: skipped %u record%s of a type this perf does not know\n",
			   es->nr_unknown_events, es->nr_unknown_events == 1 ? "" : "s");
	if (perf_data__is_pipe(data) && !rep->pipe_ended)
		rep->cut_short = "the stream ended before its recorder finished it";

	if ((perf_data__is_pipe(data) || rep->cut_short) && !rl_scan_evlist(rep)) {
		pr_err("perf refleak: %s has no kmem:kmalloc/kmem_cache_alloc/kfree/kmem_cache_free events%s; record it with 'perf refleak record'\n",
		       perf_data__is_pipe(data) ? "the input" : rep->input_name,
		       rep->cut_short ? " (cut short: none, or not their formats)" : "");
		return RL_EXIT_FATAL;
	}

	return 0;
}

/*
 * -x: one line per listed finding, a header line first (starting with #):
 * class, tier, count, bytes, the class's age in ms, counter offset
 * ("mixed" suffix "*"), cache, site.
 */
static void rl_print_csv(struct refleak_report *rep, FILE *fp)
{
	const char *x = rep->field_sep;
	const struct refleak_finding *f;

	fprintf(fp, "# class%stier%scount%sbytes%sage_ms%sref_offset%scache%ssite\n",
		x, x, x, x, x, x, x);
	for (f = rep->findings->entries; f < rl_findings_end(rep); f++) {
		struct refleak_group *g = f->group;
		char off[24] = "?";

		if (!rl_listed(rep, f->class))
			continue;
		if (g->site->offset_known)
			snprintf(off, sizeof(off), "%#" PRIx64 "%s", g->site->ref_offset,
				 g->site->offset_mixed ? "*" : "");
		fprintf(fp, "%s%s%s%s%" PRIu64 "%s%" PRIu64 "%s%.3f%s%s%s%s%s%s\n",
			refleak_class__name(f->class), x, refleak_tier__name(f->tier),
			x, g->count, x, g->bytes, x, (double)g->max_age_ns / NSEC_PER_MSEC,
			x, off, x, g->site->cache ?: "?", x, f->site);
	}
}

/* live groups, most objects of one allocation stack first */
static int rl_concentrated_cmp(const void *pa, const void *pb)
{
	const struct refleak_finding *a = *(const struct refleak_finding * const *)pa;
	const struct refleak_finding *b = *(const struct refleak_finding * const *)pb;

	return rl_cmp_desc(refleak_finding__top_alloc(a), refleak_finding__top_alloc(b)) ?:
	       rl_finding_cmp(a, b) ?: (a > b) - (a < b);
}

/* at most that many possible groups are named when --all is not given */
#define RL_POSSIBLE_NAMED	5

/*
 * Without --all, possible findings are only counted.  "Not proven" must not
 * read as "nothing there": the live groups in which one allocation stack
 * left at least min-repeat objects are named, one line each, largest first.
 */
static void rl_print_possible(struct refleak_report *rep, FILE *fp)
{
	const struct refleak_finding *f, **sel;
	size_t nr_sel = 0, i;

	sel = calloc(rep->findings->nr + 1, sizeof(*sel));
	if (!sel)
		return;
	for (f = rep->findings->entries; f < rl_findings_end(rep); f++)
		if ((f->class == REFLEAK_OUTSTANDING || f->class == REFLEAK_PUT_NOT_FREED_YET) &&
		    refleak_finding__top_alloc(f) >= max(rep->min_repeat, 2U))
			sel[nr_sel++] = f;
	if (nr_sel) {
		qsort(sel, nr_sel, sizeof(*sel), rl_concentrated_cmp);
		fprintf(fp,
			"\npossible: %zu group%s of live objects left by one allocation stack, not proven leaked\n",
			nr_sel, nr_sel > 1 ? "s" : "");
		for (i = 0; i < nr_sel && i < RL_POSSIBLE_NAMED; i++) {
			f = sel[i];
			fprintf(fp, "  %6" PRIu64 " %-17s %-22s %s\n",
				refleak_finding__top_alloc(f), refleak_class__name(f->class),
				f->group->site->cache ?: "?", f->site);
		}
		if (nr_sel > RL_POSSIBLE_NAMED)
			fprintf(fp, "  ... %zu more\n", nr_sel - RL_POSSIBLE_NAMED);
		fprintf(fp, "  (--all -g lists them with their stacks)\n");
	}
	free(sel);
}

static void rl_report_print(struct refleak_report *rep, u64 min_age_ns, u64 nr_suspicious)
{
	const struct refleak_finding *f;

	if (rep->json) {
		rl_print_json(rep, stdout);
	} else if (rep->field_sep) {
		rl_print_csv(rep, stdout);
	} else if (rep->folded) {
		for (f = rep->findings->entries; f < rl_findings_end(rep); f++)
			if (rl_listed(rep, f->class))
				rl_print_folded(rep, stdout, f);
	} else {
		setup_pager();
		rl_print_header(rep, stdout);
		if (!nr_suspicious)
			fprintf(stdout, "\nno definite or likely finding\n");
		if (!rep->all)
			rl_print_possible(rep, stdout);
		rl_print_findings(rep, stdout);
		rl_print_footer(rep, stdout, min_age_ns);
	}
	fflush(stdout);
}

/*
 * perf config keys, overridden by the command line:
 *   [refleak]
 *	sort = count,bytes	min-age = 1000	min-repeat = 2	max-stack = 8
 */
static int rl_config(const char *var, const char *value, void *cb)
{
	struct refleak_report *rep = cb;
	int n;

	if (!strstarts(var, "refleak."))
		return 0;
	var += strlen("refleak.");
	if (!strcmp(var, "sort")) {
		free(rep->config_sort);
		rep->config_sort = strdup(value);
		rep->sort_keys = rep->config_sort;
		return rep->config_sort ? 0 : -ENOMEM;
	}
	if (!strcmp(var, "min-age")) {
		free(rep->config_min_age);
		rep->config_min_age = strdup(value);
		rep->min_age_str = rep->config_min_age;
		return rep->config_min_age ? 0 : -ENOMEM;
	}
	if (!strcmp(var, "min-repeat") || !strcmp(var, "max-stack")) {
		if (perf_config_int(&n, var, value) || n < 0) {
			pr_err("perf refleak: bad refleak.%s in perf config: '%s'\n", var, value);
			return -1;
		}
		if (!strcmp(var, "min-repeat"))
			rep->min_repeat = n;
		else
			rep->max_stack = n;
		return 0;
	}
	pr_warning("perf refleak: unknown perf config key refleak.%s ignored\n", var);
	return 0;
}

/* the engine's settings from the options: 0, or the exit status */
static int rl_engine_config(struct refleak_report *rep, struct refleak_config *cfg)
{
	refleak_config__init(cfg);
	if (rep->min_age_str) {
		char *end;
		double ms = strtod(rep->min_age_str, &end);

		if (end == rep->min_age_str || *end || ms < 0) {
			pr_err("perf refleak: invalid --min-age '%s' (milliseconds)\n",
			       rep->min_age_str);
			return RL_EXIT_USAGE;
		}
		cfg->min_age_ns = (u64)(ms * NSEC_PER_MSEC);
	}
	cfg->keep_objects = rep->objects || rep->json || rep->timeline;
	cfg->symbol = rl_symbol;
	cfg->symbol_ctx = rep;
	cfg->min_repeat = rep->min_repeat ?: 1;
	return 0;
}

/* Every event read: judge what is left, print, and the exit status. */
static int rl_report_verdicts(struct refleak_report *rep, const struct refleak_config *cfg)
{
	const struct refleak_stats *st;
	u64 nr_suspicious;

	if (rep->callchain && !rep->has_callchain)
		pr_warning("perf refleak: %s was recorded without callchains (record -g): no stacks to show\n",
			   rep->input_name);

	refleak__finish(rep->rl, rep->last_time);
	st = refleak__stats(rep->rl);
	nr_suspicious = st->tier_count[REFLEAK_TIER_DEFINITE] + st->tier_count[REFLEAK_TIER_LIKELY];

	if (!rep->has_put_event)
		pr_warning("perf refleak: no %s event in %s: final puts cannot be known (kernel without "
			   REFLEAK_KCONFIG " or recorded with --kmem-only)\n",
			   REFLEAK_PUT_TP, rep->input_name);

	rep->findings = refleak_findings__new(rep->rl, &(struct refleak_findings_ops){
		.site_name = rl_findings_site_name, .cmp = rl_finding_cmp, .ctx = rep,
	});
	if (!rep->findings) {
		pr_err("perf refleak: out of memory listing the findings\n");
		return RL_EXIT_FATAL;
	}
	/* the text and the JSON say it in their summary */
	if (rep->cut_short && (rep->field_sep || rep->folded))
		pr_warning("perf refleak: %s was cut short: %s; verdicts cover its first %.3f s\n",
			   rep->input_name, rep->cut_short, rl_recorded_s(st));
	rl_report_print(rep, cfg->min_age_ns, nr_suspicious);

	/*
	 * No finding is a verdict only when no event is missing: lost events,
	 * no final-put event at all, or events out of order could hide one.
	 */
	if (rep->fail_on_leak && nr_suspicious)
		return RL_EXIT_LEAK;
	if (rep->fail_on_leak && (st->nr_lost || !rep->has_put_event || st->nr_out_of_order ||
				  rep->cut_short))
		return RL_EXIT_INCOMPLETE;
	return RL_EXIT_OK;
}

static int rl_report(int argc, const char **argv)
{
	struct refleak_report rep = {
		.input_name	= NULL,	/* perf.data, or stdin when it is a fifo */
		.sort_keys	= "count,bytes",
		.max_stack	= 8,
		.min_repeat	= REFLEAK_DEFAULT_MIN_REPEAT,
	};
	const struct option options[] = {
	OPT_STRING('i', "input", &rep.input_name, "file", "input file name, '-' for stdin"),
	OPT_STRING('s', "sort", &rep.sort_keys, "key[,key2...]",
		   "sort groups by: site, count, bytes, age (default: count,bytes)"),
	OPT_BOOLEAN(0, "objects", &rep.objects, "list individual suspicious objects"),
	OPT_BOOLEAN('a', "all", &rep.all,
		    "also list possible findings: outstanding objects, frees without final put"),
	OPT_CALLBACK_DEFAULT('g', "call-graph", &rep, "mode[,order]",
			     "show the stacks of each site: flat (default), graph or folded; "
			     "callee (leaf first, default) or caller order", rl_parse_call_graph,
			     "flat,callee"),
	OPT_BOOLEAN(0, "json", &rep.json, "JSON output"),
	OPT_BOOLEAN(0, "timeline", &rep.timeline,
		    "per finding, its live objects across the recording, as a one-line chart"),
	OPT_STRING('x', "field-separator", &rep.field_sep, "separator",
		   "the listed findings as separated values, a line each (as perf stat -x)"),
	OPT_BOOLEAN(0, "folded", &rep.folded,
		    "folded stacks of the listed findings, root first, for flamegraph.pl"),
	OPT_UINTEGER(0, "max-stack", &rep.max_stack,
		     "frames per stack with -g, after the tracing frames (default 8, 0: all)"),
	OPT_BOOLEAN(0, "fail-on-leak", &rep.fail_on_leak,
		    "exit with status 3 if any definite or likely finding is made"),
	OPT_STRING(0, "min-age", &rep.min_age_str, "ms",
		   "age before the end for final_put_not_freed and likely_leak (default 1000)"),
	OPT_UINTEGER(0, "min-repeat", &rep.min_repeat,
		     "likely_leak: objects left by one allocation stack (default 2)"),
	OPT_STRING(0, "time", &rep.time_str, "str",
		   "verdicts only for objects allocated in this window (as perf report --time)"),
	OPT_STRING(0, "pid", &rep.pid_str, "pid[,pid...]",
		   "verdicts only for objects allocated by these processes"),
	OPT_STRING(0, "tid", &rep.tid_str, "tid[,tid...]",
		   "verdicts only for objects allocated by these threads"),
	OPT_STRING(0, "comm", &rep.comm_str, "comm[,comm...]",
		   "verdicts only for objects allocated by tasks of these names"),
	OPT_STRING('k', "vmlinux", &symbol_conf.vmlinux_name, "file",
		   "vmlinux of the recorded kernel, for symbols"),
	OPT_STRING(0, "kallsyms", &symbol_conf.kallsyms_name, "file",
		   "/proc/kallsyms of the recorded kernel, for symbols"),
	OPT_BOOLEAN('f', "force", &rep.force, "don't complain, do it"),
	OPT_INCR('v', "verbose", &verbose, "be more verbose"),
	OPT_END()
	};
	const char * const report_usage[] = {
		"perf refleak report [<options>]",
		NULL
	};
	struct perf_data data = { .mode = PERF_DATA_MODE_READ, };
	struct refleak_config cfg;
	int ret = RL_EXIT_USAGE, i;

	if (perf_config(rl_config, &rep))
		goto out;
	argc = parse_options(argc, argv, options, report_usage, 0);
	if (argc)
		usage_with_options_msg(report_usage, options, "unexpected argument '%s'", argv[0]);
	if (rl_parse_sort(rep.sort_keys))
		goto out;
	/* a kernel symbol file that cannot be read is fatal, not a silent fallback */
	if (symbol__validate_sym_arguments()) {
		ret = RL_EXIT_FATAL;
		goto out;
	}

	if (rl_engine_config(&rep, &cfg))
		goto out;

	ret = RL_EXIT_FATAL;
	rep.rl = refleak__new(&cfg);
	if (!rep.rl) {
		pr_err("perf refleak: out of memory starting the correlation engine\n");
		goto out;
	}

	ret = rl_report_open(&rep, &data);
	if (ret)
		goto out;
	ret = rl_report_read(&rep, &data);
	if (!ret)
		ret = rl_report_verdicts(&rep, &cfg);
out:
	if (rep.session) {
		struct evsel *evsel;

		evlist__for_each_entry(rep.session->evlist, evsel)
			zfree(&evsel->priv);
		perf_session__delete(rep.session);
	}
	refleak_findings__delete(rep.findings);
	refleak__delete(rep.rl);
	rl_sort_list__delete();
	intlist__delete(rep.pid_list);
	intlist__delete(rep.tid_list);
	strlist__delete(rep.comm_list);
	free(rep.ptime_range);
	free(rep.config_sort);
	free(rep.config_min_age);
	free(rep.checkpoint_name);
	for (i = 0; i < rep.nr_cpu_last; i++)
		free(rep.cpu_last[i].copy);
	free(rep.cpu_last);
	return ret;
}

/* ------------------------------------------------------------------ */
/* record                                                              */

static bool rl_has_target(int argc, const char **argv)
{
	static const char * const target_opts[] = {
		"-a", "--all-cpus", "-C", "--cpu", "-p", "--pid", "-t", "--tid",
		"-u", "--uid", "--per-thread",
	};
	int i;
	size_t j;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		for (j = 0; j < ARRAY_SIZE(target_opts); j++) {
			size_t len = strlen(target_opts[j]);

			if (!strncmp(argv[i], target_opts[j], len) &&
			    (argv[i][len] == '\0' || argv[i][len] == '=' ||
			     (target_opts[j][1] != '-' && len == 2)))
				return true;
		}
	}
	return false;
}

static bool rl_has_opt(int argc, const char **argv, const char *s, const char *l)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if ((s && !strncmp(argv[i], s, 2)) ||
		    (l && !strncmp(argv[i], l, strlen(l))))
			return true;
	}
	return false;
}

/*
 * --refs a,b: the filter of ref_trace_ref, tested in the kernel before an
 * event is written: 'cache ~ "a" || cache ~ "b"' (~ takes globs).  Cache
 * names are made of [A-Za-z0-9_.:-]; anything else is refused, so that the
 * filter cannot be broken out of.
 */
#define RL_CACHE_CHARS	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-*?[]"

static char *rl_refs_filter(const char *refs)
{
	struct strbuf sb = STRBUF_INIT;
	char *list = strdup(refs), *tok, *save = NULL;
	int n = 0;

	if (!list)
		return NULL;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!*tok || strspn(tok, RL_CACHE_CHARS) != strlen(tok)) {
			pr_err("perf refleak record: invalid cache name '%s' in --refs\n", tok);
			n = -1;
			break;
		}
		strbuf_addf(&sb, "%scache ~ \"%s\"", n++ ? " || " : "", tok);
	}
	free(list);
	if (n <= 0) {
		if (!n)
			pr_err("perf refleak record: --refs needs a cache name\n");
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/*
 * The options make sense and the events a recording needs are there: 0,
 * with --refs' filter in *refs_filter, or the exit status.
 */
static int rl_record_check(bool kmem_only, const char *refs, char **refs_filter)
{
	size_t t;

	for (t = 0; t < refleak_nr_events; t++) {
		const struct refleak_event *ev = &refleak_events[t];

		if (rl_need_of(ev) == RL_NEED_KMEM && !is_valid_tracepoint(ev->name)) {
			pr_err("perf refleak: tracepoint %s not found: tracefs not mounted or not readable (run as root?) or kernel without CONFIG_TRACING\n",
			       ev->name);
			return RL_EXIT_FATAL;
		}
	}
	if (refs && kmem_only) {
		pr_err("perf refleak record: --refs needs the ref_trace events, not --kmem-only\n");
		return RL_EXIT_USAGE;
	}
	if (refs) {
		*refs_filter = rl_refs_filter(refs);
		if (!*refs_filter)
			return RL_EXIT_USAGE;
	}
	if (refs && !is_valid_tracepoint(REFLEAK_REF_TP)) {
		pr_err("perf refleak: tracepoint %s not found: --refs needs a kernel with "
		       REFLEAK_REFS_KCONFIG "=y\n", REFLEAK_REF_TP);
		return RL_EXIT_FATAL;
	}
	if (!kmem_only && !is_valid_tracepoint(REFLEAK_PUT_TP)) {
		pr_err("perf refleak: tracepoint %s not found: the running kernel needs "
		       REFLEAK_KCONFIG
		       "=y; use 'perf refleak record --kmem-only' to record allocations only (no verdict on final puts possible)\n",
		       REFLEAK_PUT_TP);
		return RL_EXIT_FATAL;
	}
	return 0;
}

/* -o -, --output=-: perf record writes a pipe */
static bool rl_to_pipe(int argc, const char **argv)
{
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--"); i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc &&
		    !strcmp(argv[i + 1], "-"))
			return true;
		if (!strcmp(argv[i], "-o-") || !strcmp(argv[i], "--output=-"))
			return true;
	}
	return false;
}

/*
 * -b follows the life cycle events, and writes to a file what the programs
 * kept, at the end, before the events of the run.  0 or the exit status.
 */
static int rl_record_bpf_usage(bool kmem_only, const char *refs, bool gets_puts, int argc,
			       const char **argv)
{
	if (kmem_only) {
		pr_err("perf refleak record: -b follows the life cycle events: not with --kmem-only\n");
		return RL_EXIT_USAGE;
	}
	if (refs && !gets_puts) {
		pr_err("perf refleak record: --refs chooses the caches whose gets and puts -b follows: not with --no-gets-puts\n");
		return RL_EXIT_USAGE;
	}
	/* the programs match the names themselves */
	if (refs && strpbrk(refs, "[]")) {
		pr_err("perf refleak record: -b matches the caches of --refs with '*' and '?' only\n");
		return RL_EXIT_USAGE;
	}
	if (rl_to_pipe(argc, argv)) {
		pr_err("perf refleak record: -b writes to a file, not to a pipe (-o -)\n");
		return RL_EXIT_USAGE;
	}
	return 0;
}

/*
 * -b: the gets and puts of every object followed, unless --no-gets-puts
 * (with --refs, of those caches: rl_record_check() made its filter).  The
 * event is in the recording for its format, and its filter says which
 * caches were followed (rl_refs_recorded()): all.  NULL: none.
 */
static const char *rl_record_bpf_refs(bool gets_puts)
{
	if (!gets_puts)
		return NULL;
	if (!is_valid_tracepoint(REFLEAK_REF_TP)) {
		pr_warning("perf refleak: %s not found: -b does not follow gets and puts (a kernel without CONFIG_REF_TRACE_REFS)\n",
			   REFLEAK_REF_TP);
		return NULL;
	}
	return "cache ~ \"*\"";
}

/* -b: a perf built with the BPF programs, a kernel with BTF.  0 or the exit status. */
static int rl_record_bpf(void)
{
	if (!refleak_bpf_built()) {
		pr_err("perf refleak record: -b needs a perf built with BPF skeletons (clang and BUILD_BPF_SKEL=1); record without -b\n");
		return RL_EXIT_FATAL;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("perf refleak record: -b needs the kernel's BTF (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF=y); record without -b\n");
		return RL_EXIT_FATAL;
	}
	return 0;
}

/* what record was asked, for perf record's arguments */
struct rl_record_opts {
	int		argc;		/* the arguments left to perf record */
	const char	**argv;
	int		cmd;		/* where "--" is in them; 0: no command */
	const char	*linger;		/* --linger's option; NULL: none */
	const char	*refs_filter;
	const char	*bpf_entries;	/* -b: --refleak-bpf's value; NULL: not -b */
	const char	*switch_output;	/* -b: --switch-output's option; NULL: none */
	bool		kmem_only;
};

/* perf record's arguments: counted (args->argv NULL), then written */
struct rl_args {
	const char	**argv;
	int		argc;
};

static void rl_arg(struct rl_args *args, const char *arg)
{
	if (args->argv)
		args->argv[args->argc] = arg;
	args->argc++;
}

/* perf record's -e (and --filter) arguments, from the events of refleak-events.c */
static void rl_record_events(struct rl_args *args, const struct rl_record_opts *o)
{
	size_t t;

	for (t = 0; t < refleak_nr_events; t++) {
		const struct refleak_event *ev = &refleak_events[t];
		enum rl_need need = rl_need_of(ev);

		switch (need) {
		case RL_NEED_KMEM:
			break;
		case RL_NEED_LIFE:
			if (o->kmem_only)
				continue;
			break;
		case RL_NEED_LIFE_OPTIONAL:
			if (o->kmem_only)
				continue;
			fallthrough;
		case RL_NEED_OPTIONAL:
			if (!is_valid_tracepoint(ev->name)) {
				/* said once: when written */
				if (args->argv)
					pr_warning("perf refleak: %s not found: %s\n",
						   ev->name, rl_kinds[ev->kind].without);
				continue;
			}
			break;
		case RL_NEED_REFS:
			if (!o->refs_filter)
				continue;
			break;
		case RL_NEED_READ:
		default:
			continue;
		}
		rl_arg(args, "-e");
		rl_arg(args, ev->name);
		if (need == RL_NEED_REFS) {
			rl_arg(args, "--filter");
			rl_arg(args, o->refs_filter);
		}
	}
}

static void rl_record_args(struct rl_args *args, const struct rl_record_opts *o)
{
	int i, argc = o->argc - 1;
	const char **argv = o->argv + 1;

	rl_arg(args, "record");
	rl_arg(args, "-R");
	rl_arg(args, "-c");
	rl_arg(args, "1");
	if (!rl_has_target(argc, argv))
		rl_arg(args, "-a");
	if (!rl_has_opt(argc, argv, NULL, "--call-graph") && !rl_has_opt(argc, argv, "-g", NULL) &&
	    !rl_has_opt(argc, argv, NULL, "--no-call-graph")) {
		rl_arg(args, "-g");
		rl_arg(args, "--kernel-callchains");
	}
	if (o->bpf_entries) {
		/*
		 * The events are in the recording for their formats, never
		 * enabled: the programs take them.  Its samples are stamped
		 * with their clock.
		 */
		rl_arg(args, "-D");
		rl_arg(args, "-1");
		rl_arg(args, "-k");
		rl_arg(args, "monotonic");
		/* the programs keep the processes the report needs */
		rl_arg(args, "--no-tracking");
		rl_arg(args, "--refleak-bpf");
		rl_arg(args, o->bpf_entries);
		/*
		 * At a checkpoint perf record finishes the output with the
		 * state so far and sets it aside as <output>.<timestamp>, the
		 * one before it removed: a recording killed leaves its last.
		 */
		if (o->switch_output) {
			rl_arg(args, o->switch_output);
			rl_arg(args, "--switch-max-files=1");
		}
	} else {
		/* a file cut short can still be read: its formats are in its data */
		rl_arg(args, "--early-tracing-data");
		if (!rl_has_opt(argc, argv, "-m", "--mmap-pages")) {
			rl_arg(args, "-m");
			rl_arg(args, "1024");
		}
	}
	rl_record_events(args, o);
	/*
	 * Keep recording for a while after the command and its children
	 * exited, so that the frees they leave to RCU and to workqueues land
	 * in the recording before objects are judged.
	 */
	if (o->linger)
		rl_arg(args, o->linger);
	for (i = 1; i < o->argc; i++)
		rl_arg(args, o->argv[i]);
}

/* perf refleak record: perf record's exit status (its command's), or ours */
static int rl_record(int argc, const char **argv)
{
	const char *settle = REFLEAK_DEFAULT_SETTLE;
	char linger[32];
	unsigned int nr_bpf_entries = REFLEAK_BPF_DEFAULT_ENTRIES;
	unsigned int checkpoint = REFLEAK_DEFAULT_CHECKPOINT;
	char bpf_entries[16], switch_output[32];
	struct rl_record_opts o = { .cmd = 0, };
	struct rl_args args = { .argv = NULL, };
	const char *refs = NULL;
	char *refs_filter = NULL;
	bool kmem_only = false, bpf = false, gets_puts = true;
	int i, rec_argc, ret;
	const struct option options[] = {
	OPT_BOOLEAN('b', "use-bpf", &bpf,
		    "follow the objects in the kernel (BPF): only what is not balanced is written"),
	OPT_UINTEGER(0, "map-nr-entries", &nr_bpf_entries,
		     "with -b: how many live objects can be followed"),
	OPT_UINTEGER(0, "checkpoint", &checkpoint,
		     "with -b: write the state into a checkpoint every n seconds (0: never)"),
	OPT_BOOLEAN(0, "gets-puts", &gets_puts,
		    "with -b: every get and put of the objects followed (the default)"),
	OPT_BOOLEAN(0, "kmem-only", &kmem_only,
		    "record the kmem events alone (a kernel without " REFLEAK_KCONFIG ")"),
	OPT_STRING(0, "settle", &settle, "seconds",
		   "go on recording after <command> exited (default " REFLEAK_DEFAULT_SETTLE ")"),
	OPT_STRING(0, "refs", &refs, "cache[,cache...]",
		   "every get and put of these caches' counters too ('kmalloc-*64'); -b: only"),
	OPT_END()
	};
	const char * const rec_usage[] = {
		"perf refleak record [<options>] [-- <command>]",
		"  any other option is perf record's (-o, -m, -C, -p, --no-call-graph, ...)",
		NULL
	};

	/* our own options; the others, and the command after "--", go to perf record */
	argc = parse_options(argc, argv, options, rec_usage, PARSE_OPT_KEEP_ARGV0 |
			     PARSE_OPT_KEEP_UNKNOWN | PARSE_OPT_KEEP_DASHDASH);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			o.cmd = i;
			break;
		}
	}
	if (strspn(settle, "0123456789.") != strlen(settle) || !*settle) {
		pr_err("perf refleak record: invalid --settle '%s' (seconds)\n", settle);
		return RL_EXIT_USAGE;
	}

	/* what this perf cannot do first, then what the kernel lacks */
	ret = bpf ? rl_record_bpf_usage(kmem_only, refs, gets_puts, argc - 1, argv + 1) : 0;
	if (!ret && bpf)
		ret = rl_record_bpf();
	if (!ret)
		ret = rl_record_check(kmem_only, refs, &refs_filter);
	if (ret) {
		free(refs_filter);
		return ret;
	}

	o.argc = argc;
	o.argv = argv;
	if (o.cmd && o.cmd + 1 < argc && strtod(settle, NULL) > 0) {
		snprintf(linger, sizeof(linger), "--linger=%.0f",
			 strtod(settle, NULL) * MSEC_PER_SEC);
		o.linger = linger;
	}
	o.refs_filter = refs_filter;
	o.kmem_only = kmem_only;
	if (bpf) {
		/* 0: the default, where perf record's --refleak-bpf=0 is off */
		snprintf(bpf_entries, sizeof(bpf_entries), "%u",
			 nr_bpf_entries ?: REFLEAK_BPF_DEFAULT_ENTRIES);
		o.bpf_entries = bpf_entries;
		snprintf(switch_output, sizeof(switch_output), "--switch-output=%us", checkpoint);
		o.switch_output = checkpoint ? switch_output : NULL;
		if (!refs_filter)
			o.refs_filter = rl_record_bpf_refs(gets_puts);
	}
	/* counted, then written: exactly as many */
	rl_record_args(&args, &o);
	rec_argc = args.argc;
	args = (struct rl_args){ .argv = calloc(rec_argc + 1, sizeof(char *)), };
	if (!args.argv) {
		free(refs_filter);
		pr_err("perf refleak record: out of memory for perf record's arguments\n");
		return RL_EXIT_FATAL;
	}
	rl_record_args(&args, &o);
	BUG_ON(args.argc != rec_argc);

	if (verbose > 0) {
		fprintf(stderr, "perf");
		for (i = 0; i < rec_argc; i++)
			fprintf(stderr, " %s", args.argv[i]);
		fputc('\n', stderr);
	}
	ret = cmd_record(rec_argc, args.argv);
	free(args.argv);
	free(refs_filter);
	/* perf record said why it failed */
	return ret < 0 ? RL_EXIT_FATAL : ret;
}

/* ------------------------------------------------------------------ */
/* perf refleak top: a live view of the objects followed, by site      */

#define REFLEAK_TOP_DELAY	2
#define REFLEAK_TOP_ENTRIES	20

static volatile sig_atomic_t rl_top_done, rl_top_exec_errno;

static void rl_top_signal(int sig __maybe_unused)
{
	rl_top_done = 1;
}

/* the command could not be run: evlist__prepare_workload()'s child says why */
static void rl_top_exec_failed(int sig __maybe_unused, siginfo_t *info,
			       void *ucontext __maybe_unused)
{
	rl_top_exec_errno = info->si_value.sival_int;
	rl_top_done = 1;
}

struct rl_top {
	struct machine			*machine;
	struct refleak_bpf_site_now	*sites, *prev;
	ssize_t				nr_sites, nr_prev;
	u64				start_ns;
	unsigned int			entries;
	bool				tty;
};

static u64 rl_top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int rl_top_cmp_key(const void *a, const void *b)
{
	const struct refleak_bpf_site_now *x = a, *y = b;

	if (x->call_site != y->call_site)
		return x->call_site < y->call_site ? -1 : 1;
	return x->cache < y->cache ? -1 : x->cache > y->cache;
}

/* the most objects first; then the oldest */
static int rl_top_cmp_rank(const void *a, const void *b)
{
	const struct refleak_bpf_site_now *x = a, *y = b;

	if (x->nr_objects != y->nr_objects)
		return x->nr_objects > y->nr_objects ? -1 : 1;
	return x->oldest_ns < y->oldest_ns ? -1 : x->oldest_ns > y->oldest_ns;
}

/* the objects the site had at the view before, sorted by key */
static s64 rl_top_before(struct rl_top *top, const struct refleak_bpf_site_now *s)
{
	const struct refleak_bpf_site_now *p = NULL;

	if (top->nr_prev > 0)
		p = bsearch(s, top->prev, top->nr_prev, sizeof(*p), rl_top_cmp_key);
	return p ? (s64)p->nr_objects : 0;
}

static void rl_top_print(struct rl_top *top, u64 missed)
{
	u64 now = rl_top_now(), nr = 0;
	char site[256];
	ssize_t i;

	for (i = 0; i < top->nr_sites; i++)
		nr += top->sites[i].nr_objects;
	if (top->tty)
		fputs(CONSOLE_CLEAR, stdout);
	printf("perf refleak top: %.0f s, %" PRIu64 " objects followed at %zd allocation sites",
	       (now - top->start_ns) / 1e9, nr, top->nr_sites);
	if (missed)
		color_fprintf(stdout, PERF_COLOR_RED,
			      "; missed in the kernel: %" PRIu64 " (counts may be short)", missed);
	printf("\n\n%10s %8s %10s  %-40s %s\n", "objects", "change", "oldest", "site", "cache");
	for (i = 0; i < top->nr_sites && i < (ssize_t)top->entries; i++) {
		const struct refleak_bpf_site_now *s = &top->sites[i];
		s64 change = (s64)s->nr_objects - rl_top_before(top, s);
		const char *name = NULL;
		u64 start = 0;

		rl_kernel_symbol(top->machine, s->call_site, &name, &start);
		rl_symbol_name(name, start, s->call_site, true, site, sizeof(site));
		printf("%10" PRIu64 " ", s->nr_objects);
		color_fprintf(stdout, change > 0 ? PERF_COLOR_RED : PERF_COLOR_NORMAL,
			      "%+8" PRId64, change);
		printf(" %8.1f s  %-40s %s\n",
		       now > s->oldest_ns ? (now - s->oldest_ns) / 1e9 : 0.0, site, s->cache_name);
	}
	if (!top->tty)
		putchar('\n');
	fflush(stdout);
}

/* read the maps and print; the sites sorted by key are kept for the next change */
static int rl_top_refresh(struct rl_top *top)
{
	u64 missed;
	ssize_t nr = refleak_bpf_top_read(&top->sites, &missed);

	if (nr < 0) {
		pr_err("perf refleak top: cannot read the objects followed: %s\n",
		       strerror(-nr));
		return RL_EXIT_FATAL;
	}
	top->nr_sites = nr;
	/* the view ranks them; the next one compares by key */
	qsort(top->sites, nr, sizeof(*top->sites), rl_top_cmp_rank);
	rl_top_print(top, missed);
	qsort(top->sites, nr, sizeof(*top->sites), rl_top_cmp_key);
	free(top->prev);
	top->prev = top->sites;
	top->nr_prev = nr;
	top->sites = NULL;
	return 0;
}

static int rl_top(int argc, const char **argv)
{
	struct refleak_bpf_opts bpf_opts = { .nr_entries = REFLEAK_BPF_DEFAULT_ENTRIES, };
	struct rl_top top = { .entries = REFLEAK_TOP_ENTRIES, };
	struct target target = { .system_wide = true, };
	struct evlist *evlist = NULL;
	struct perf_session *session;
	struct perf_env host_env;
	struct perf_tool tool;
	unsigned int delay = REFLEAK_TOP_DELAY;
	int ret = RL_EXIT_FATAL;
	u64 next, shown;
	const struct option options[] = {
	OPT_UINTEGER('d', "delay", &delay, "seconds between views (default 2)"),
	OPT_UINTEGER('E', "entries", &top.entries, "sites shown (default 20)"),
	OPT_UINTEGER(0, "map-nr-entries", &bpf_opts.nr_entries,
		     "how many live objects can be followed"),
	OPT_END()
	};
	const char * const top_usage[] = {
		"perf refleak top [<options>] [-- <command>]",
		NULL
	};

	argc = parse_options(argc, argv, options, top_usage, 0);
	if (!delay) {
		pr_err("perf refleak top: --delay must be at least 1 second\n");
		return RL_EXIT_USAGE;
	}
	if (!refleak_bpf_built()) {
		pr_err("perf refleak top: needs a perf built with BPF skeletons (clang and BUILD_BPF_SKEL=1)\n");
		return RL_EXIT_FATAL;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("perf refleak top: needs the kernel's BTF (/sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF=y)\n");
		return RL_EXIT_FATAL;
	}
	if (!is_valid_tracepoint(REFLEAK_SET_TP)) {
		pr_err("perf refleak top: no %s event: a kernel with %s is needed\n",
		       REFLEAK_SET_TP, REFLEAK_KCONFIG);
		return RL_EXIT_FATAL;
	}

	perf_tool__init(&tool, /*ordered_events=*/false);
	perf_env__init(&host_env);
	session = __perf_session__new(NULL, &tool, /*trace_event_repipe=*/false, &host_env);
	if (IS_ERR(session)) {
		pr_err("perf refleak top: cannot make a session\n");
		return RL_EXIT_FATAL;
	}
	symbol__init(perf_session__env(session));
	top.machine = &session->machines.host;
	top.tty = isatty(STDOUT_FILENO);

	if (argc) {
		evlist = evlist__new();
		if (!evlist || evlist__create_maps(evlist, &target) < 0 ||
		    evlist__prepare_workload(evlist, &target, argv, false,
					     rl_top_exec_failed) < 0) {
			pr_err("perf refleak top: cannot start %s\n", argv[0]);
			goto out;
		}
	}
	/* loading takes a while: Ctrl-C meanwhile gives the first view */
	signal(SIGINT, rl_top_signal);
	signal(SIGTERM, rl_top_signal);
	ret = refleak_bpf_top_start(&bpf_opts);
	if (ret) {
		if (evlist)
			evlist__cancel_workload(evlist);
		ret = RL_EXIT_FATAL;
		goto out;
	}

	if (evlist) {
		signal(SIGCHLD, rl_top_signal);
		evlist__start_workload(evlist);
	}
	top.start_ns = rl_top_now();
	shown = top.start_ns;
	next = top.start_ns + delay * NSEC_PER_SEC;
	while (!rl_top_done && !ret) {
		usleep(100 * USEC_PER_MSEC);
		if (rl_top_now() >= next) {
			ret = rl_top_refresh(&top);
			shown = rl_top_now();
			next += delay * NSEC_PER_SEC;
		}
	}
	if (rl_top_exec_errno) {
		pr_err("perf refleak top: cannot run %s: %s\n", argv[0],
		       strerror(rl_top_exec_errno));
		ret = RL_EXIT_FATAL;
	}
	/* the view at the end, what the command left or what Ctrl-C found, unless just shown */
	if (!ret && (shown == top.start_ns || rl_top_now() - shown > 200 * NSEC_PER_MSEC))
		ret = rl_top_refresh(&top);
	refleak_bpf_top_stop();
	if (evlist && evlist__workload_pid(evlist) > 0) {
		int status;

		/* Ctrl-C: the command goes too */
		kill(evlist__workload_pid(evlist), SIGTERM);
		waitpid(evlist__workload_pid(evlist), &status, 0);
	}
out:
	free(top.prev);
	if (evlist)
		evlist__put(evlist);
	perf_session__delete(session);
	perf_env__exit(&host_env);
	return ret;
}

int cmd_refleak(int argc, const char **argv)
{
	const struct option options[] = {
	OPT_INCR('v', "verbose", &verbose, "be more verbose"),
	OPT_END()
	};
	const char *const subcommands[] = { "record", "report", "top", NULL };
	const char *usage[] = { NULL, NULL };

	argc = parse_options_subcommand(argc, argv, options, subcommands, usage,
					PARSE_OPT_STOP_AT_NON_OPTION);
	if (!argc)
		usage_with_options(usage, options);

	if (strlen(argv[0]) > 2 && strstarts("record", argv[0]))
		return rl_record(argc, argv);
	if (strlen(argv[0]) > 2 && strstarts("report", argv[0]))
		return rl_report(argc, argv);
	if (!strcmp("top", argv[0]))
		return rl_top(argc, argv);
	usage_with_options(usage, options);
}
