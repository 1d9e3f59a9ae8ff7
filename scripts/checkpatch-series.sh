#!/usr/bin/env bash
# checkpatch --strict over every patch of kernel/series (and the cover
# letter's neighbours are skipped: it carries no diff). Fails on any error,
# warning or check.
#   checkpatch-series.sh <assembled tree>
. "$(dirname "$0")/lib.sh"
tree=$1
bad=0
while read -r p; do
	case $p in ''|'#'*) continue ;; esac
	if out=$("$tree/scripts/checkpatch.pl" --strict -q --root="$tree" "$TOP/kernel/$p" 2>&1) &&
		! grep -qE '^(ERROR|WARNING|CHECK):' <<< "$out"; then
		echo "ok   $p"
	else
		echo "FAIL $p"
		echo "$out" | sed 's/^/    /'
		bad=1
	fi
done < "$TOP/kernel/series"
exit $bad
