#!/bin/sh
# Runs inside the guest for 'make bench': three recordings of the test
# driver's balanced scenario at 1x, 2x and 4x the size (4x holds over a
# million kmem and final-put events), plus a few leaks, for the host to
# time perf refleak report, perf kmem and perf script on.
ctl=/sys/kernel/debug/test_refleak/control
n=${BENCH_OBJECTS:-100000}
[ -w "$ctl" ] || { echo "bench: no test driver ($ctl)"; exit 1; }
for mult in 1 2 4; do
	total=$((n * mult))
	perf refleak record -m 4096 -o "/tmp/bench-${mult}x.data" -- sh -c "
		left=$total
		while [ \$left -gt 0 ]; do
			c=\$left; [ \$c -gt 100000 ] && c=100000
			echo \"balanced \$c\" > $ctl
			left=\$((left - c))
		done
		echo 'leak_ref 10' > $ctl
		echo 'free_no_put 10' > $ctl" > "/out/record-${mult}x.log" 2>&1
	echo reclaim > "$ctl"
	mv "/tmp/bench-${mult}x.data" /out/
done
cat /proc/kallsyms > /out/kallsyms
