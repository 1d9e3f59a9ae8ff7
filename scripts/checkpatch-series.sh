#!/usr/bin/env bash
# checkpatch --strict over every patch of the two postings, as make series
# writes them (the kernel series and the perf series, format-patch of the
# assembled tree, signed off by whoever runs it). Fails on any error,
# warning or check, except the ones listed in kernel/checkpatch.allow
# (each with the reason it stands); those are printed as accepted.
#   checkpatch-series.sh <assembled tree>
. "$(dirname "$0")/lib.sh"
tree=$1
allow=$TOP/kernel/checkpatch.allow
bad=0
cd "$tree"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ident=$(series_identity) nosign=
if [ -n "$ident" ]; then
	ktip=$(sign_commits "$tree" pristine kernel-top "$(git rev-parse pristine)" "$ident")
	ptip=$(sign_commits "$tree" kernel-top assembled "$ktip" "$ident")
else
	# nobody to sign as: the patches as committed, without the sign-off check
	echo "note: no git identity (user.name, user.email): checked with --no-signoff"
	ktip=kernel-top ptip=assembled nosign=--no-signoff
fi
git format-patch -q -o "$dir/kernel" "pristine..$ktip"
git format-patch -q -o "$dir/perf" "$ktip..$ptip"
while read -r p; do
	patch=$dir/$p
	p=${p#*/}
	# The system python3 (spdxcheck needs python3-ply), run from the tree top.
	out=$(PATH=/usr/bin:/bin:$PATH ./scripts/checkpatch.pl --strict -q --no-summary ${nosign:+"$nosign"} \
		"$patch" 2>&1 || true)
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
done < <(cd "$dir" && ls kernel/*.patch perf/*.patch)
# The postings apply on the pristine tree, the kernel one then the perf one,
# as git am would apply them.
(
	export GIT_INDEX_FILE=$dir/index
	git read-tree pristine
	for p in "$dir"/kernel/*.patch "$dir"/perf/*.patch; do
		git apply --cached "$p" 2>&1 || { echo "FAIL      ${p#"$dir"/} does not apply"; exit 1; }
	done
	echo "ok postings apply on pristine, kernel then perf ($(cd "$dir" && ls kernel/*.patch perf/*.patch | wc -l) patches)"
) || bad=1
exit $bad
