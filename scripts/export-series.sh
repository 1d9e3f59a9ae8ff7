#!/usr/bin/env bash
# make export-series [REF=<branch>]: write kernel/*.patch and kernel/series
# back from the commits pristine..<branch> of the assembled tree (default
# kernel-top), so that a kernel patch is edited as a commit:
#
#   cd "$(scripts/assemble-tree.sh)" && git checkout -b edit kernel-top
#   ... edit, git commit --amend or git rebase -i pristine ...
#   make export-series REF=edit
#
# The patches are written without an author, a date or a Signed-off-by:
# 'make series' gives them those of whoever runs it.  The next assembly
# (any make target) rebuilds the tree from the exported files.
#   export-series.sh [<git dir> <range>]: from another repository (a tree
#   that holds only the files the series touches will do)
. "$(dirname "$0")/lib.sh"
if [ $# -eq 2 ]; then
	repo=$1 range=$2
else
	repo=$("$TOP/scripts/assemble-tree.sh")
	range=pristine..${REF:-kernel-top}
fi
git -C "$repo" rev-parse -q --verify "${range#*..}" >/dev/null || die "no such ref: ${range#*..}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$repo" format-patch -q --no-signature --zero-commit -N --no-renames -o "$tmp" "$range"
[ -n "$(ls "$tmp")" ] || die "no commits in $range"
# the mail header without From and Date; the message without Signed-off-by
for f in "$tmp"/*.patch; do
	awk 'NR == 1 && /^From [0-9a-f]+ / { next }
	     hdr && /^(From|Date): / { skip = 1; next }
	     hdr && skip && /^[ \t]/ { next }
	     hdr { skip = 0 }
	     hdr && /^$/ { hdr = 0 }
	     !hdr && body && /^Signed-off-by: / { next }
	     !hdr && /^---$/ { body = 0 }
	     { print }
	     BEGIN { hdr = 1; body = 1 }' "$f" > "$f.new"
	mv "$f.new" "$f"
done
rm -f "$TOP"/kernel/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$TOP/kernel/"
(cd "$tmp" && ls ./*.patch | sed 's|^\./||') > "$TOP/kernel/series"
log "wrote $(wc -l < "$TOP/kernel/series") patches to kernel/ and kernel/series"
