#!/usr/bin/env bash
# make long-run: one long 'perf refleak record -b' of the balanced workload
# with its holder in the small guest (guest/long-run.sh; not in make
# check): LONG_RUN_SECONDS (default 7200), GUEST_CPUS (default 1 here, to
# leave a core to the host).  Prints, at 10 min, 1 h, the end and for the
# final output: bytes written (the output and its checkpoint), perf's RSS,
# the objects followed and the sites summed, what the kernel missed, and
# the definite and likely findings of the report.
. "$(dirname "$0")/lib.sh"
t=${LONG_RUN_SECONDS:-7200}
out=$BUILD/long-run
mkdir -p "$out"
bins=$("$TOP/scripts/build-guest-bins.sh")
echo "$t" > "$BUILD/long-run-seconds"
# shellcheck disable=SC2086 # one path a word
GUEST_CPUS=${GUEST_CPUS:-1} GUEST_TIMEOUT=$((t + 1200)) \
	"$TOP/scripts/run-guest.sh" "$TOP/guest/long-run.sh" "$out" $bins "$BUILD/long-run-seconds" ||
	die "the long-run guest failed (see $out/console.log)"
[ -f "$out/long.rc" ] || die "perf refleak record did not finish (see $out/long.err)"
echo "perf refleak record -b exit $(cat "$out/long.rc"), checkpoints left: $(wc -l < "$out/long.left")"
printf '%-6s %7s %12s %12s %9s %9s %8s %6s %9s %s\n' mark s output checkpoint \
	"RSS kB" "max kB" objects sites findings missed
row() { # <label> <file> <seconds> <output bytes> <checkpoint bytes> <rss> <hwm>
	local json txt objects sites found missed
	json=$("$BUILD/perf" refleak report -i "$2" --kallsyms "$out/kallsyms" --json 2> /dev/null) || true
	txt=$("$BUILD/perf" refleak report -i "$2" --kallsyms "$out/kallsyms" 2> /dev/null) || true
	objects=$(sed -n 's/.*"outstanding": \([0-9]*\).*/\1/p' <<< "$json" | head -n 1) || true
	sites=$(sed -n 's/^# recorded with -b: .* (\([0-9]*\) sites).*/\1/p' <<< "$txt")
	found=$(sed -n 's/.*"tiers": {"definite": \([0-9]*\), "likely": \([0-9]*\).*/\1+\2/p' <<< "$json")
	missed=$(sed -n 's/^# missed in the kernel: //p' <<< "$txt")
	printf '%-6s %7s %12s %12s %9s %9s %8s %6s %9s %s\n' "$1" "$3" "$4" "$5" "$6" "$7" \
		"${objects:--}" "${sites:--}" "${found:--}" "${missed:-none}"
}
while read -r label secs osize csize rss hwm; do
	row "$label" "$out/long-$label.data" "$secs" "$osize" "$csize" "$rss" "$hwm"
done < "$out/long.marks"
row final "$out/long-final.data" "$t" "$(wc -c < "$out/long-final.data")" 0 - -
echo "the maps at their fullest, and the events in flight (-v, at the end):"
for what in 'objects followed at once' 'sites summed' 'processes kept' 'events in flight'; do
	grep "^perf refleak: $what" "$out/long.err" | tail -n 1 | sed 's/^perf refleak: /  /' || true
done
