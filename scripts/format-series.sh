#!/usr/bin/env bash
# make series: the two postings, as git format-patch files of the assembled
# tree, each numbered on its own with its cover letter:
#   build/series/kernel/  the kernel series (kernel/cover-letter.txt), to
#                         the refcount, tracing and slab maintainers
#   build/series/perf/    perf refleak (perf-series/cover-letter.txt),
#                         to perf-tools-next; it needs the kernel series
# Authored and signed off by whoever runs it (series_identity in lib.sh).
# Check them with: git am build/series/kernel/*.patch build/series/perf/*.patch
# on a 7.2.13 tree.
. "$(dirname "$0")/lib.sh"
VERSION=v7
ident=$(series_identity)
[ -n "$ident" ] || die "no git identity: set git config user.name and user.email (the series is signed off by whoever writes it)"
tree=$("$TOP/scripts/assemble-tree.sh")
ktip=$(sign_commits "$tree" pristine kernel-top "$(git -C "$tree" rev-parse pristine)" "$ident")
ptip=$(sign_commits "$tree" kernel-top assembled "$ktip" "$ident")
rm -rf "$BUILD/series"
posting() { # <dir> <base> <tip> <cover text: title line, blank, body>
	local dir=$BUILD/series/$1 cover title
	git -C "$tree" format-patch -q --cover-letter --subject-prefix="PATCH $VERSION" \
		-o "$dir" "$2..$3"
	cover=$(ls "$dir"/0000-cover-letter.patch)
	title=$(head -n 1 "$4")
	# git's placeholders: the subject and the blurb
	awk -v title="$title" -v body="$4" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, title) }
		/^\*\*\* BLURB HERE \*\*\*$/ {
			n = 0
			while ((getline line < body) > 0)
				if (n++ >= 2)
					print line
			next
		}
		{ print }' "$cover" > "$cover.new"
	mv "$cover.new" "$cover"
}
posting kernel "$(git -C "$tree" rev-parse pristine)" "$ktip" "$TOP/kernel/cover-letter.txt"
posting perf "$ktip" "$ptip" "$TOP/perf-series/cover-letter.txt"
log "signed off by $ident"
(cd "$BUILD/series" && ls kernel/* perf/*)
