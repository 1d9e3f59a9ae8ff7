#!/bin/sh
# perf refleak on a stock workload (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# Needs only the ref_trace events (CONFIG_REF_TRACE), not the test driver:
# records 'perf bench sched messaging' (processes exchanging messages over
# sockets, then exiting) with 'perf refleak record', and expects the
# counters' life cycle in the recording (births and final puts) and no
# definite or likely finding: 'report --fail-on-leak' must exit 0.
#
# Exit: 0 pass, 1 fail, 2 skip (reason printed).

# shellcheck source=lib/refleak_bpf.sh
. "$(dirname "$0")"/lib/refleak_bpf.sh

err=0
tmpdir=

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
	trap - EXIT INT TERM
}
# shellcheck disable=SC2154 # st is set inside the trap
trap 'st=$?; cleanup; exit $st' EXIT
trap 'err=1; exit 1' INT TERM

refleak_skip_unless_traced
tmpdir=$(mktemp -d /tmp/__perf_test_refleak_stock.XXXXXX) || exit 1
data=$tmpdir/perf.data

if ! perf refleak record -o "$data" -- perf bench sched messaging -g 1 -l 5 \
	> "$tmpdir/record.out" 2> "$tmpdir/record.err"; then
	echo "[FAIL] perf refleak record of perf bench sched messaging"
	cat "$tmpdir/record.err"
	exit 1
fi
perf refleak report -i "$data" --json > "$tmpdir/report.json" 2> "$tmpdir/report.err"
for ev in set final_put; do
	n=$(sed -n "s/.*\"$ev\": \([0-9]*\).*/\1/p" "$tmpdir/report.json" | head -n 1)
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then
		echo "[PASS] the recording has $n $ev events"
	else
		echo "[FAIL] no $ev event in the recording"
		err=1
	fi
done
perf refleak report -i "$data" --fail-on-leak -g > "$tmpdir/report.txt" 2>&1
refleak_no_finding "perf bench sched messaging" "$tmpdir/report.txt" $?
exit $err
