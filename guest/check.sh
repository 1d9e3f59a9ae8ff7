#!/bin/sh
# Runs inside the guest (as /guest/run.sh) for 'make check'. Each check
# leaves <name>.rc (0 pass, 2 skip, other fail) and <name>.log in /out;
# the host judges them, so nothing here depends on console text.
cd /guest || exit 1
. ./lib.sh

# KUnit ran at boot; its per-suite KTAP results are in debugfs.
mkdir -p "$res/kunit"
for d in /sys/kernel/debug/kunit/*/; do
	[ -f "$d/results" ] && cp "$d/results" "$res/kunit/$(basename "$d").ktap"
done

# Kernel symbols for the host's perf report: the guest's kallsyms.
cat /proc/kallsyms > "$res/kallsyms"

# The pipeline itself: kmem tracepoints with callchains around a workload.
run kmem-record perf record -q -a -g -e kmem:kmalloc -e kmem:kfree \
	-o "$res/kmem.data" -- sh -c 'for i in 1 2 3 4 5; do ls -lR /proc/self > /dev/null; done'

if [ -f ./tracepoint-check.sh ]; then
	run tracepoint sh ./tracepoint-check.sh
fi

# No false findings on a real workload (balanced.sh)
. ./balanced.sh

# perf refleak's own tests: the engine's C unit test and the shell test.
# all of each test's output (-vv); the recordings of a -b test that
# found other findings than the plain recording are kept
export REFLEAK_TEST_KEEP="$res/perf-test-kept"
run perf-test-refleak perf test -vv refleak
echo "guest-check: finished"
