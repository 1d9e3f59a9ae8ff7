#!/usr/bin/env bash
# make bench: record large workloads in the guest, then on the host time
# perf refleak report against perf kmem --caller stat and perf script on the
# same file, and report's peak RSS at 1x, 2x and 4x the input. Prints
# figures; judges nothing.
#
# Each command runs BENCH_RUNS times (default 3); the figures are the
# medians (wall time from GNU time, peak RSS = VmHWM). Time it on a quiet
# machine: the load average is printed first.
. "$(dirname "$0")/lib.sh"
out=$BUILD/bench
runs=${BENCH_RUNS:-3}
# The recording table: what recording costs the workload (guest/record-cost.sh),
# on the small guest kernel, or with BENCH_KERNEL=realistic on the realistic one
# (make realistic builds it).
record_cost() {
	local kernel=${BENCH_KERNEL:-small} c bins label it secs size lost img=$BUILD/bzImage
	local -A rate=()
	local icount=${BENCH_ICOUNT:-0} clock="s"
	c=$out/record-cost-$kernel
	[ "$icount" = 1 ] && c=$c-icount clock="s of guest time (qemu -icount: a second is 10^9 guest instructions)"
	[ "$kernel" = small ] || img=$BUILD/bzImage-$kernel
	[ -f "$img" ] || die "no $img: build it with 'make kernel KERNEL_FLAVOR=$kernel'"
	bins=$("$TOP/scripts/build-guest-bins.sh")
	# RECORD_COST_BPF_SECONDS=3600: a long 'record -b' run as well (raise
	# GUEST_TIMEOUT to match)
	rm -f "$BUILD/record-cost-bpf-seconds"
	[ -z "${RECORD_COST_BPF_SECONDS:-}" ] ||
		echo "$RECORD_COST_BPF_SECONDS" > "$BUILD/record-cost-bpf-seconds"
	[ -f "$BUILD/record-cost-bpf-seconds" ] && bins="$bins $BUILD/record-cost-bpf-seconds"
	# BENCH_REUSE=1 prints the table of the previous run again
	[ "${BENCH_REUSE:-0}" = 1 ] && [ -f "$c/cost-refleak.out" ] ||
	# shellcheck disable=SC2086 # one path a word
	GUEST_ICOUNT=$icount GUEST_TIMEOUT=${GUEST_TIMEOUT:-$((icount ? 5400 : 900))} BZIMAGE=$img \
		"$TOP/scripts/run-guest.sh" "$TOP/guest/record-cost.sh" "$c" $bins >&2 ||
		die "the record-cost guest failed (see $c/console.log)"
	if [ -f "$c/startup.txt" ]; then
		echo "Start-up ($kernel guest kernel, $clock): perf refleak record [-b] -- true, one run"
		printf '%-12s %16s %10s\n' recording "to start line" whole
		awk '{ printf "%-12s %16s %10s\n", $1, $2, $3 }' "$c/startup.txt"
		sed -n 's/^perf refleak: \(verified .*\|BPF programs opened .*\)/  \1/p' \
			"$c/startup-bpf-v.err" 2>/dev/null
		echo
	fi
	echo "Recording cost ($kernel guest kernel): guest/workload/balanced.c for ${RECORD_COST_SECONDS:-15} $clock each, one run"
	printf '%-12s %12s %10s %10s %8s\n' recording iterations/s "MB/s" "MB" lost
	for label in none kmem-nocg kmem-g kmem-put-g refleak refs-pid refs-none none-again bpf \
		bpf-lifetimes bpf-long; do
		[ -f "$c/cost-$label.out" ] || continue
		it=$(sed -n 's/^balanced: \([0-9]*\) iterations in \([0-9.]*\) s.*/\1 \2/p' "$c/cost-$label.out")
		secs=${it#* } it=${it% *}
		rate[$label]=$it/$secs
		size=$(cat "$c/cost-$label.size" 2>/dev/null || echo 0)
		lost=$(grep -o 'lost [0-9]* chunks\|[0-9]* samples lost\|LOST [0-9]*' "$c/cost-$label.err" |
			head -n 1 || true)
		awk -v l="$label" -v i="$it" -v s="$secs" -v b="$size" -v lost="${lost:--}" 'BEGIN {
			printf "%-12s %12.1f %10.2f %10.1f %8s\n", l, i / s, b / s / 1e6, b / 1e6, lost }'
	done
	# -b against the workload alone, measured just before it
	for label in bpf bpf-lifetimes; do
		[ -n "${rate[none-again]:-}" ] && [ -n "${rate[$label]:-}" ] &&
		awk -v a="${rate[none]}" -v b="${rate[none-again]}" -v r="${rate[$label]}" \
			-v l="$label" 'BEGIN {
			split(a, x, "/"); split(b, y, "/"); split(r, z, "/")
			r = z[1] / z[2]
			printf "%s keeps %.0f %% of the unrecorded throughput just before it (%.0f %% of the first)\n",
				l, 100 * r / (y[1] / y[2]), 100 * r / (x[1] / x[2]) }'
	done
	# what -b found, what its programs missed, how full the maps of the
	# default --map-nr-entries were
	for label in bpf bpf-lifetimes bpf-long; do
		[ -f "$c/cost-$label.data" ] || continue
		"$BUILD/perf" refleak report -i "$c/cost-$label.data" --kallsyms "$c/kallsyms" \
			> "$c/cost-$label.report" 2>&1
		echo "$label: findings: $(sed -n 's/^# findings: //p' "$c/cost-$label.report");" \
			"$(sed -n 's/^# \(missed in the kernel: .*\)/\1/p' "$c/cost-$label.report")"
		sed -n 's/^perf refleak: \(objects followed at once: .*\|sites summed: .*\|processes kept: .*\|events in flight left .*\|gets and puts of .*\|balanced objects kept whole: .*\)/  \1/p' \
			"$c/cost-$label.err"
	done
	echo
}
[ "${BENCH_RECORD:-1}" = 0 ] || record_cost
[ "${BENCH_RECORD_ONLY:-0}" = 0 ] || exit 0

# BENCH_REUSE=1 times the recordings of the previous run again.
[ "${BENCH_REUSE:-0}" = 1 ] && [ -f "$out/bench-4x.data" ] ||
GUEST_MEM=${GUEST_MEM:-8G} GUEST_DISK=${GUEST_DISK:-8G} GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} \
	"$TOP/scripts/run-guest.sh" "$TOP/guest/bench.sh" "$out"
perf=$BUILD/perf

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# <label> <command...>: median wall seconds and peak RSS (MB) of $runs runs,
# kept in $out/<label>.time as "<seconds> <KB>".
measure() {
	local label=$1 i t w=() m=()
	shift
	for ((i = 0; i < runs; i++)); do
		/usr/bin/time -o "$out/$label.run" -f '%e %M' "$@" > /dev/null 2>&1 || true
		t=$(tail -n 1 "$out/$label.run")
		w+=("${t% *}") m+=("${t#* }")
	done
	echo "$(printf '%s\n' "${w[@]}" | median) $(printf '%s\n' "${m[@]}" | median)" > "$out/$label.time"
	t=$(cat "$out/$label.time")
	printf '%-34s %8.2f s %8.0f MB\n' "$label" "${t% *}" "$(( ${t#* } / 1024 ))"
}

# <label> <command...>: the largest anonymous and file-backed RSS seen,
# polling /proc/<pid>/status every 5 ms (one run): what the tool allocates
# against what it maps of the input.
rss_split() {
	local label=$1 pid a f ma=0 mf=0
	shift
	"$@" > /dev/null 2>&1 &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		# the process may be gone by now: no status to read, done
		read -r a f < <(awk '/^RssAnon/ { a = $2 } /^RssFile/ { f = $2 } END { print a + 0, f + 0 }' \
			"/proc/$pid/status" 2> /dev/null) || break
		[ "${a:-0}" -gt "$ma" ] && ma=$a
		[ "${f:-0}" -gt "$mf" ] && mf=$f
		sleep 0.005
	done
	wait "$pid" || true
	printf '%-34s %5d MB anonymous %5d MB file-backed\n' "$label" $((ma / 1024)) $((mf / 1024))
}

ratio() { awk -v a="$(cut -d' ' -f"$3" "$out/$1.time")" -v b="$(cut -d' ' -f"$3" "$out/$2.time")" 'BEGIN { printf "%.2f", a / b }'; }

big=$out/bench-4x.data
echo "input: $big ($(du -h "$big" | cut -f1))"
"$perf" report -i "$big" --stats 2>/dev/null | grep -E 'SAMPLE events|LOST events|LOST_SAMPLES' || true
grep -h 'Captured and wrote\|lost' "$out"/record-*.log || true
echo "machine: $(nproc) cores, load average$(uptime | sed 's/.*load average//'); medians of $runs runs"
echo
measure refleak-report "$perf" refleak report -i "$big"
measure kmem-caller-stat "$perf" kmem -i "$big" --caller stat
measure perf-script "$perf" script -i "$big"
echo
echo "report / kmem wall time:   $(ratio refleak-report kmem-caller-stat 1)"
echo "report / kmem peak RSS:    $(ratio refleak-report kmem-caller-stat 2)"
echo "report / script wall time: $(ratio refleak-report perf-script 1)"
echo
# Both commands above symbolize with the kernel perf finds on this machine
# (perf kmem has no --kallsyms); the right symbols for a guest recording:
measure refleak-report-kallsyms "$perf" refleak report -i "$big" --kallsyms "$out/kallsyms"
echo
for mult in 1 2 4; do
	measure "refleak-report-${mult}x" "$perf" refleak report -i "$out/bench-${mult}x.data"
done
for mult in 1 2 4; do
	measure "kmem-caller-stat-${mult}x" "$perf" kmem -i "$out/bench-${mult}x.data" --caller stat
done
echo
echo "Peak RSS split (one run each):"
for mult in 1 4; do
	rss_split "refleak-report-${mult}x" "$perf" refleak report -i "$out/bench-${mult}x.data"
	rss_split "kmem-caller-stat-${mult}x" "$perf" kmem -i "$out/bench-${mult}x.data" --caller stat
done
cat <<'EOF'

perf maps the whole input file; every page it reads counts in the reader's
RSS (file-backed: page cache, shared and reclaimable, but resident in the
process). perf kmem keeps all of it until it exits, so its RSS grows with
the file. perf refleak report drops the pages of events already delivered
(after each flushed round of ordered events), so its RSS is its own state:
live objects, recently freed ones (kept to see a put after free), sites
and distinct stacks, which in this workload do not grow with the input.
EOF
