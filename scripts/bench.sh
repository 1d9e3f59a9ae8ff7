#!/usr/bin/env bash
# make bench: record large workloads in the guest, then on the host time
# perf refleak report against perf kmem --caller stat and perf script on the
# same file, and report's peak RSS at 1x, 2x and 4x the input. Prints
# figures; judges nothing.
. "$(dirname "$0")/lib.sh"
out=$BUILD/bench
# BENCH_REUSE=1 times the recordings of the previous run again.
[ "${BENCH_REUSE:-0}" = 1 ] && [ -f "$out/bench-4x.data" ] ||
GUEST_MEM=${GUEST_MEM:-8G} GUEST_DISK=${GUEST_DISK:-8G} GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} \
	"$TOP/scripts/run-guest.sh" "$TOP/guest/bench.sh" "$out"
perf=$BUILD/perf

# <label> <command...>: wall seconds and peak RSS (MB), from GNU time.
measure() {
	local label=$1 t
	shift
	/usr/bin/time -o "$out/$label.time" -f '%e %M' "$@" > /dev/null 2>&1 || true
	t=$(tail -n 1 "$out/$label.time")
	printf '%-34s %8.2f s %8.0f MB\n' "$label" "${t% *}" "$(( ${t#* } / 1024 ))"
}

big=$out/bench-4x.data
echo "input: $big ($(du -h "$big" | cut -f1))"
"$perf" report -i "$big" --stats 2>/dev/null | grep -E 'SAMPLE events|LOST events|LOST_SAMPLES' || true
grep -h 'Captured and wrote\|lost' "$out"/record-*.log || true
echo
measure refleak-report "$perf" refleak report -i "$big"
measure kmem-caller-stat "$perf" kmem -i "$big" --caller stat
measure perf-script "$perf" script -i "$big"
ratio() { awk -v a="$(cut -d' ' -f"$3" "$out/$1.time")" -v b="$(cut -d' ' -f"$3" "$out/$2.time")" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "report / kmem wall time:   $(ratio refleak-report kmem-caller-stat 1)"
echo "report / kmem peak RSS:    $(ratio refleak-report kmem-caller-stat 2)"
echo "report / script wall time: $(ratio refleak-report perf-script 1)"
echo
for mult in 1 2 4; do
	measure "refleak-report-${mult}x" "$perf" refleak report -i "$out/bench-${mult}x.data"
done
