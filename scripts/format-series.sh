#!/usr/bin/env bash
# Write the whole series, kernel patches and the perf commit, as
# git format-patch files into build/series/.
. "$(dirname "$0")/lib.sh"
tree=$("$TOP/scripts/assemble-tree.sh")
rm -rf "$BUILD/series"
git -C "$tree" format-patch -q --subject-prefix="PATCH v4" -o "$BUILD/series" pristine..assembled
ls "$BUILD/series"
