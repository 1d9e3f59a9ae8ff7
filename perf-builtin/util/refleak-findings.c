// SPDX-License-Identifier: GPL-2.0
/*
 * The findings of 'perf refleak report', in the order every output shows
 * them; see refleak-findings.h.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/zalloc.h>
#include "refleak-findings.h"
#include "refleak-refs.h"

/* qsort() has no context: the order of the call being sorted */
static int (*findings_cmp)(const struct refleak_finding *a, const struct refleak_finding *b);

static int finding_cmp(const void *pa, const void *pb)
{
	const struct refleak_finding *a = pa, *b = pb;
	u64 x = a->group->site->call_site, y = b->group->site->call_site;
	int c = findings_cmp ? findings_cmp(a, b) : 0;

	return c ?: x > y ? -1 : x < y;
}

/* f[i] and, after it, the findings it holds, in their sorted order */
static void place(const struct refleak_finding *f, size_t nr, size_t i,
		  struct refleak_finding *out, size_t *n, bool *done)
{
	size_t j;

	done[i] = true;
	out[(*n)++] = f[i];
	for (j = 0; j < nr; j++)
		if (!done[j] && f[j].group->held_by == f[i].group)
			place(f, nr, j, out, n, done);
}

/*
 * A group whose references another listed group's objects hold comes
 * right after its holder: the root first, so that the first finding a
 * user follows (and its 'record --refs' hint) is the leak to fix.
 */
static int roots_first(struct refleak_finding *f, size_t nr)
{
	struct refleak_finding *out = calloc(nr + 1, sizeof(*out));
	bool *done = calloc(nr + 1, sizeof(*done));
	size_t i, j, n = 0;

	if (!out || !done) {
		free(out);
		free(done);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		for (j = 0; j < nr; j++)
			if (j != i && f[i].group->held_by == f[j].group)
				break;
		if (j == nr && !done[i])
			place(f, nr, i, out, &n, done);
	}
	for (i = 0; i < nr; i++)	/* holders holding each other */
		if (!done[i])
			out[n++] = f[i];
	memcpy(f, out, nr * sizeof(*f));
	free(out);
	free(done);
	return 0;
}

static int finding__init(struct refleak_finding *f, struct refleak_group *g,
			 const struct refleak_findings_ops *ops)
{
	char buf[512];
	int k;

	f->group = g;
	f->class = g->class;
	f->tier = refleak_class__tier(g->class);
	f->site = strdup(ops->site_name(ops->ctx, g->site, buf, sizeof(buf)));
	if (!f->site)
		return -1;
	for (k = 0; k < REFLEAK_NR_STACK_KINDS; k++)
		f->stacks[k] = refleak_group__stacks(g, k, &f->nr_stacks[k]);
	f->unput = refleak_refs__unput(g, &f->nr_unput);
	return 0;
}

static void finding__exit(struct refleak_finding *f)
{
	int k;

	zfree(&f->site);
	for (k = 0; k < REFLEAK_NR_STACK_KINDS; k++)
		zfree(&f->stacks[k]);
	zfree(&f->unput);
}

struct refleak_findings *refleak_findings__new(struct refleak *rl,
					       const struct refleak_findings_ops *ops)
{
	struct refleak_findings *fs = zalloc(sizeof(*fs));
	size_t alloc = 0, i, j;
	int c;

	if (!fs)
		return NULL;
	/* never NULL, also without findings: the outputs walk it as an array */
	fs->entries = calloc(1, sizeof(*fs->entries));
	if (!fs->entries)
		goto fail;
	for (c = 0; c < REFLEAK_BALANCED; c++) {
		struct refleak_group **groups;
		struct refleak_finding *more;
		size_t nr, first = fs->nr;

		groups = refleak__groups(rl, c, &nr);
		if (!groups)
			goto fail;
		if (fs->nr + nr > alloc) {
			alloc = (fs->nr + nr) * 2;
			more = realloc(fs->entries, (alloc + 1) * sizeof(*more));
			if (!more) {
				free(groups);
				goto fail;
			}
			fs->entries = more;
		}
		for (i = 0; i < nr; i++) {
			memset(&fs->entries[fs->nr], 0, sizeof(fs->entries[fs->nr]));
			if (finding__init(&fs->entries[fs->nr++], groups[i], ops)) {
				free(groups);
				goto fail;
			}
		}
		free(groups);
		if (!nr)
			continue;
		findings_cmp = ops->cmp;
		qsort(fs->entries + first, nr, sizeof(*fs->entries), finding_cmp);
		if (roots_first(fs->entries + first, nr))
			goto fail;
	}
	for (i = 0; i < fs->nr; i++) {
		const struct refleak_group *holder = fs->entries[i].group->held_by;

		for (j = 0; holder && j < fs->nr; j++)
			if (fs->entries[j].group == holder)
				fs->entries[i].held_by = &fs->entries[j];
	}
	return fs;
fail:
	refleak_findings__delete(fs);
	return NULL;
}

void refleak_findings__delete(struct refleak_findings *fs)
{
	size_t i;

	if (!fs)
		return;
	for (i = 0; i < fs->nr; i++)
		finding__exit(&fs->entries[i]);
	free(fs->entries);
	free(fs);
}

u64 refleak_finding__top_alloc(const struct refleak_finding *f)
{
	return f->nr_stacks[REFLEAK_STACK_ALLOC] ? f->stacks[REFLEAK_STACK_ALLOC][0].count : 0;
}
