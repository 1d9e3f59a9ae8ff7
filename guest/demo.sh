#!/bin/sh
# Runs inside the guest for 'make demo': each test-driver scenario under
# perf refleak record, then the report with stacks.
ctl=/sys/kernel/debug/test_refleak/control
cd /tmp || exit 1
if [ ! -w "$ctl" ]; then
	echo "demo: no test driver ($ctl); this kernel lacks CONFIG_TEST_REFLEAK"
	exit 1
fi
perf refleak record -o /tmp/perf.data -- sh -c "
	echo 'balanced 50' > $ctl
	echo 'leak_ref 3' > $ctl
	echo 'leak_all 3' > $ctl
	echo 'free_no_put 2' > $ctl
	echo 'put_no_free 4 kmalloc' > $ctl
	echo 'percpu 5' > $ctl
	echo 'rcu 10' > $ctl
	echo 'put_after_free 2' > $ctl
	echo 'double_put 2 kmalloc' > $ctl
	sleep 3"
echo reclaim > "$ctl"
perf refleak report -i /tmp/perf.data -g > /out/report.txt 2>&1
echo "report exit status: $?" >> /out/report.txt
perf refleak report -i /tmp/perf.data --min-age 0 --json > /out/report.json 2>/dev/null
cp /tmp/perf.data /out/perf.data
cat /proc/kallsyms > /out/kallsyms
