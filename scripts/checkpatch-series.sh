#!/usr/bin/env bash
# checkpatch --strict over every patch of kernel/series and of the perf
# series (the perf commits of the assembled tree). Fails on any error,
# warning or check, except the ones listed in kernel/checkpatch.allow
# (each with the reason it stands); those are printed as accepted.
#   checkpatch-series.sh <assembled tree>
. "$(dirname "$0")/lib.sh"
tree=$1
allow=$TOP/kernel/checkpatch.allow
bad=0
cd "$tree"
# The perf series too: format-patch of the perf commits of the tree.
perfdir=$(mktemp -d)
trap 'rm -rf "$perfdir"' EXIT
git -C "$tree" format-patch -q -o "$perfdir" kernel-top..assembled
while read -r p; do
	case $p in ''|'#'*) continue ;; esac
	patch=$TOP/kernel/$p
	[ -f "$patch" ] || patch=$perfdir/$p
	# The system python3 (spdxcheck needs python3-ply), run from the tree top.
	out=$(PATH=/usr/bin:/bin:$PATH ./scripts/checkpatch.pl --strict -q --no-summary "$patch" 2>&1 || true)
	# One finding per line: "<patch>: <message> @ <file>", matched against the
	# allow list; the patch without its number, which moves when patches do.
	findings=$(awk -v p="${p#[0-9][0-9][0-9][0-9]-}" '/^(ERROR|WARNING|CHECK):/ { msg = $0; next }
		msg && /^#[0-9]+: FILE: / { f = $3; sub(/:[0-9]+:$/, "", f); print p ": " msg " @ " f; msg = "" }
		msg && !/^#/ { print p ": " msg; msg = "" }' <<< "$out")
	status=ok
	while IFS= read -r f; do
		[ -n "$f" ] || continue
		if [ -f "$allow" ] && grep -qxF "$f" <(grep -v '^#' "$allow"); then
			echo "accepted  $f"
		else
			echo "FAIL      $f"
			status=FAIL
		fi
	done <<< "$findings"
	if grep -q 'Traceback\|ModuleNotFoundError' <<< "$out"; then
		echo "FAIL      $p: checkpatch could not run cleanly:"; echo "$out" | sed 's/^/    /'
		status=FAIL
	fi
	echo "$status $p"
	[ "$status" = ok ] || bad=1
done < <(cat "$TOP/kernel/series"; (cd "$perfdir" && ls ./*.patch | sed 's|^\./||'))
exit $bad
