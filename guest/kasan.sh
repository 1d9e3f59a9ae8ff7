#!/bin/sh
# Runs inside the KASAN guest for 'make kasan' (THREAD_SIZE 32 KiB): the
# -b shell test, which compares -b's findings with the plain recording's
# on the driver's scenarios, and one -v recording of them for how many
# stacks the programs knew without unwinding them.
cd /guest || exit 1
. ./lib.sh
drv=/sys/kernel/debug/test_refleak
uname -r > "$res/uname"
dmesg | grep -c 'BUG: KASAN' > "$res/kasan-reports-at-boot"
run perf-test-refleak-bpf perf test -vv "perf refleak record -b"
echo reclaim > "$drv/control"
run record-v perf refleak record -b -v --settle 1 -o /tmp/v.data -- sh -c "
	echo 'balanced 20 cache' > $drv/control &&
	echo 'leak_ref 3 cache' > $drv/control &&
	echo 'balanced 20 kmalloc' > $drv/control"
run report-v perf refleak report -i /tmp/v.data
echo reclaim > "$drv/control"
dmesg | grep -c 'BUG: KASAN' > "$res/kasan-reports"
