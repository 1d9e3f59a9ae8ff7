/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_REFLEAK_FINDINGS_H
#define __PERF_REFLEAK_FINDINGS_H
/*
 * What 'perf refleak report' shows, built once at the end of a recording:
 * the reported groups of every class but balanced, in report order (enum
 * refleak_class), each class's groups sorted by the caller's keys with a
 * group kept alive by another listed right after it, and with each group
 * its stacks and the references its objects never put.  Every output (text,
 * JSON, CSV, folded) renders this one list.
 */
#include <stddef.h>
#include "refleak.h"

struct refleak_finding {
	struct refleak_group		*group;	/* counts, objects, evidence */
	enum refleak_class		class;
	enum refleak_tier		tier;
	char				*site;	/* the site as the caller names it */
	/* distinct stacks of each kind, most frequent first */
	struct refleak_stack_count	*stacks[REFLEAK_NR_STACK_KINDS];
	size_t				nr_stacks[REFLEAK_NR_STACK_KINDS];
	/* references never put, most objects first (refleak_refs__unput()) */
	struct refleak_unput		**unput;
	size_t				nr_unput;
	/* the finding whose objects hold this one's references, or NULL */
	const struct refleak_finding	*held_by;
};

struct refleak_findings_ops {
	/* names a site into buf ("function+0x12"), returns buf */
	const char *(*site_name)(void *ctx, const struct refleak_site *site,
				 char *buf, size_t size);
	/*
	 * Order of two findings of one class, as the user asked for; ties
	 * are broken by call site.  NULL: by call site only.
	 */
	int (*cmp)(const struct refleak_finding *a, const struct refleak_finding *b);
	void *ctx;
};

struct refleak_findings {
	struct refleak_finding	*entries;
	size_t			nr;
};

/* after refleak__finish(); NULL on allocation failure */
struct refleak_findings *refleak_findings__new(struct refleak *rl,
					       const struct refleak_findings_ops *ops);
void refleak_findings__delete(struct refleak_findings *f);

/* objects of the finding's most frequent allocation stack (0: no callchains) */
u64 refleak_finding__top_alloc(const struct refleak_finding *f);

#endif /* __PERF_REFLEAK_FINDINGS_H */
