#!/bin/bash
# perf refleak report against golden files (host side, nothing booted)
# SPDX-License-Identifier: GPL-2.0
#
# usage: golden.sh [--update] <perf binary>
#
# Runs 'perf refleak report' on the fixtures of tests/golden/ (perf.data
# files recorded in the guest by scripts/record-golden.sh, symbolized with
# the guest's kallsyms through --kallsyms: <name>.kallsyms for <name>.data
# recorded in a boot of its own, else kallsyms), once per line of
# tests/golden/cases, and compares exit status, stdout and stderr with
# tests/golden/expected/; each text report is also cross-checked against
# the JSON report of the same options (text-json-crosscheck.py).  --update writes the expected files from this
# perf instead (review the diff).
#
# Output is TAP-like: "ok <case>" / "not ok <case> - <reason>" with a diff.
# Exit: 0 all passed, 1 a case failed, 2 cannot run (reason printed).

set -u
dir=$(cd "$(dirname "$0")/../golden" && pwd)
update=0
if [ "${1:-}" = --update ]; then
	update=1
	shift
fi
PERF=${1:-}

cannot_run() {
	echo "# SKIP: $*"
	exit 2
}
[ -n "$PERF" ] || cannot_run "usage: $0 [--update] <perf binary>"
[ -x "$PERF" ] || cannot_run "$PERF is not an executable"
PERF=$(readlink -f "$PERF")
[ -f "$dir/cases" ] || cannot_run "no $dir/cases"
for tool in gzip diff; do
	command -v "$tool" > /dev/null || cannot_run "no $tool"
done

work=$(mktemp -d /tmp/refleak-golden.XXXXXX) || cannot_run "mktemp failed"
trap 'rm -rf "$work"' EXIT
for f in "$dir"/*.gz; do
	gzip -dc "$f" > "$work/$(basename "$f" .gz)" || cannot_run "cannot unpack $f"
done
[ -s "$work/kallsyms" ] || cannot_run "no kallsyms.gz in $dir"
mkdir -p "$dir/expected"

failed=0 n=0
# diff_or_update <case> <kind: out|err>: compare one output with its
# expected file (a missing .err file means no stderr).
diff_or_update() {
	local want=$dir/expected/$1.$2 got=$work/$1.$2
	if [ "$update" = 1 ]; then
		if [ "$2" = out ] || [ -s "$got" ]; then
			cp "$got" "$want"
		else
			rm -f "$want"
		fi
		return 0
	fi
	[ -f "$want" ] || want=/dev/null
	diff -u --label "expected/$1.$2" --label "got/$1.$2" "$want" "$got" > "$work/$1.$2.diff"
}

while read -r name input status opts; do
	case $name in ''|'#'*) continue ;; esac
	n=$((n + 1))
	stdin=/dev/null file=$input
	case $input in '<'*) file=${input#<}; stdin=$work/$file ;; esac
	[ -f "$work/$file" ] || { echo "not ok $name - no fixture $file.gz"; failed=1; continue; }
	# relative paths: messages that name the input are the same on every run
	[ "$stdin" = /dev/null ] && opts="-i $file $opts"
	ks=${file%.data}.kallsyms
	[ -f "$work/$ks" ] || ks=kallsyms
	opts="--kallsyms $ks $opts"
	# shellcheck disable=SC2086 # options are split on purpose
	(cd "$work" && timeout 60 "$PERF" refleak report $opts) \
		< "$stdin" > "$work/$name.out" 2> "$work/$name.err"
	rc=$?
	if [ "$update" = 1 ]; then
		if [ "$rc" != "$status" ]; then
			echo "not ok $name - exit status $rc, cases says $status: not updated"
			sed 's/^/# /' "$work/$name.err" | head -n 5
			failed=1
			continue
		fi
		diff_or_update "$name" out
		diff_or_update "$name" err
		echo "updated $name"
		continue
	fi
	why=
	[ "$rc" = "$status" ] || why="exit status $rc, expected $status"
	diff_or_update "$name" out || why="${why:+$why; }stdout differs"
	diff_or_update "$name" err || why="${why:+$why; }stderr differs"
	# the text report must agree with the JSON report of the same options
	case " $opts " in *" --json "*|*" --folded "*) ;; *)
		if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
			# shellcheck disable=SC2086
			(cd "$work" && timeout 60 "$PERF" refleak report $opts --json) \
				< "$stdin" > "$work/$name.json" 2> /dev/null
			python3 "$(dirname "$0")/text-json-crosscheck.py" "$work/$name.out" "$work/$name.json" \
				> "$work/$name.cross" 2>&1 ||
				why="${why:+$why; }text and JSON disagree: $(head -n 3 "$work/$name.cross" | tr '\n' ' ')"
		fi ;;
	esac
	if [ -z "$why" ]; then
		echo "ok $name"
	else
		echo "not ok $name - $why"
		cat "$work/$name.out.diff" "$work/$name.err.diff" | head -n 40 | cut -c1-160 | sed "s/^/# /"
		failed=1
	fi
done < "$dir/cases"

[ "$n" -gt 0 ] || cannot_run "no cases in $dir/cases"
if [ "$update" = 1 ]; then
	echo "# $n cases: expected files written to $dir/expected"
else
	echo "# $n cases, $([ $failed = 0 ] && echo all passed || echo some failed)"
fi
exit $failed
