#!/usr/bin/env bash
# Write the whole series into build/series/: the cover letter, the kernel
# patches (v5) and the perf commit, as git format-patch files of the
# assembled tree.
. "$(dirname "$0")/lib.sh"
tree=$("$TOP/scripts/assemble-tree.sh")
rm -rf "$BUILD/series"
mkdir -p "$BUILD/series"
cp "$TOP/kernel/0000-cover-letter.patch" "$BUILD/series/"
git -C "$tree" format-patch -q --subject-prefix="PATCH v5" -o "$BUILD/series" pristine..assembled
ls "$BUILD/series"
