#!/bin/sh
# Runs inside a realistic guest (x86_64 defconfig) for 'make cost': the
# test driver's "bench" (life cycles of a refcount_t, a file_ref_t and an
# rcuref_t through the hooked paths), with the ref_trace events disabled,
# and, where the kernel has them, enabled and recorded by perf record
# (without and with callchains); ref_trace_ref with the bench's cache
# traced and with it filtered out.  One line per measurement in
# /out/bench: "<type>:<mode> n=<n> cycles=<c> ns=<ns>".
cd /guest || exit 1
N=${BENCH_N:-2000000}
ctl=/sys/kernel/debug/test_refleak
[ -d "$ctl" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
uname -r > /out/uname
if [ ! -w "$ctl/control" ]; then
	echo "no test_refleak driver (CONFIG_TEST_REFLEAK)" > /out/bench.err
	exit 0
fi
bench() { # <mode> [perf record options...]: one timed run of $type
	mode=$type:$1
	shift
	if [ $# -gt 0 ]; then
		perf record -q -a -o /tmp/bench.data "$@" -- \
			sh -c "echo 'bench $N $type' > $ctl/control" > /tmp/rec.log 2>&1 ||
			{ echo "$mode: perf record failed: $(tail -n 2 /tmp/rec.log)" >> /out/bench.err; return; }
	else
		echo "bench $N $type" > "$ctl/control" || { echo "$mode: bench failed" >> /out/bench.err; return; }
	fi
	echo "$mode $(sed -n 's/^bench //p' "$ctl/status")" >> /out/bench
}
: > /out/bench
echo "bench $N" > "$ctl/control"	# warm-up, not kept
for type in refcount file_ref rcuref; do
	bench disabled
	bench disabled
	if perf list 2>/dev/null | grep -q ref_trace:ref_trace_final_put; then
		ev="-e ref_trace:ref_trace_set -e ref_trace:ref_trace_final_put -e ref_trace:ref_trace_anomaly"
		# shellcheck disable=SC2086 # the event options, a word each
		bench enabled $ev
		# shellcheck disable=SC2086
		bench enabled-g $ev -g
	fi
	# ref_trace_ref (every get and put): the bench's counter is in an
	# object of test_refleak_refs; traced when the filter names that
	# cache, filtered out in the kernel when it names another.
	if perf list 2>/dev/null | grep -q ref_trace:ref_trace_ref; then
		bench refs-traced -e ref_trace:ref_trace_ref --filter 'cache == "test_refleak_refs"'
		bench refs-filtered -e ref_trace:ref_trace_ref --filter 'cache == "no_such_cache"'
		bench refs-traced-g -e ref_trace:ref_trace_ref --filter 'cache == "test_refleak_refs"' -g
	fi
done
cat /out/bench
