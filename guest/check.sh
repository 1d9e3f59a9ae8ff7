#!/bin/sh
# Runs inside the guest (as /guest/run.sh) for 'make check'. Each check
# leaves <name>.rc (0 pass, 2 skip, other fail) and <name>.log in /out;
# the host judges them, so nothing here depends on console text.
cd /guest || exit 1
res=/out
run() { # <name> <command...>
	name=$1
	shift
	echo "guest-check: $name"
	"$@" > "$res/$name.log" 2>&1
	echo $? > "$res/$name.rc"
	tail -n 5 "$res/$name.log"
}

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

# No false findings on a real workload nobody here wrote the kernel paths
# of: fork/exec, files, pipes, IPC, namespaces, keys, timers, sockets, for
# 20 s, with a holder (-H) that legitimately keeps objects of the same
# kinds alive past the end of the recording.  The host reports on the
# recording (faster than TCG).
# The holder outlives balanced by 10 s: let it release everything before
# the next recording starts.
wait_holder() {
	i=0
	while pidof balanced-hold > /dev/null && [ $i -lt 40 ]; do
		sleep 1
		i=$((i + 1))
	done
}
if [ -x ./balanced ]; then
	ifconfig lo 127.0.0.1 up 2>/dev/null
	run balanced-record perf refleak record -o "$res/balanced.data" --settle 3 -- \
		./balanced -t 20 -s 0 -H
	wait_holder
	# The same, its objects followed in the kernel (record -b).
	run balanced-bpf-record perf refleak record -b -o "$res/balanced-bpf.data" --settle 3 -- \
		./balanced -t 20 -s 0 -H
	wait_holder
fi

# perf refleak's own tests: the engine's C unit test and the shell test.
# all of each test's output (-vv); the recordings of a -b test that
# found other findings than the plain recording are kept
export REFLEAK_TEST_KEEP="$res/perf-test-kept"
run perf-test-refleak perf test -vv refleak
echo "guest-check: finished"
