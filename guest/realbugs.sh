#!/bin/sh
# Runs inside the guest for 'make realbugs' (as /guest/run.sh): each case
# of tests/realbugs/cases triggered REALBUGS_N times from userspace under
# perf refleak record, with every get and put of the case's cache
# (--refs).  The host reports on the recordings; the same script runs on
# the kernel with the upstream bugs and on the one without them.  Each
# recording runs inside 'perf refleak record -b' (<case>-b.data), whose
# findings the host compares with the plain recording's.
cd /guest || exit 1
n=$(cat ./realbugs-n 2>/dev/null || echo 20)
ifconfig lo 127.0.0.1 up 2>/dev/null
cat /proc/kallsyms > /out/kallsyms
grep -v '^#' ./cases | while read -r name _patch _site _cache refs _get _naming _evidence mode; do
	[ -n "$name" ] || continue
	echo "realbugs: $name x$n (--refs $refs, trigger $mode)"
	rm -f /tmp/trigger.done /tmp/trigger.pid
	# every get and put of the leaking cache: the report names the get
	if [ "$mode" = stays ]; then
		# the trigger is still running when the recording ends: the
		# recorded command waits for its iterations, 2 s more, and exits
		perf refleak record -b --settle 0 -o "/out/$name-b.data" -- \
		perf refleak record --refs "$refs" -o "/out/$name.data" -- sh -c '
			REALBUGS_DONE=/tmp/trigger.done REALBUGS_STAY=60 ./trigger "$0" "$1" &
			echo $! > /tmp/trigger.pid
			while [ ! -e /tmp/trigger.done ] && kill -0 $! 2>/dev/null; do sleep 0.2; done
			[ -e /tmp/trigger.done ] || { wait $!; exit; }
			sleep 2' "$name" "$n" > "/out/$name.log" 2>&1
		rc=$?
		kill "$(cat /tmp/trigger.pid)" 2>/dev/null
		wait 2>/dev/null
	else
		perf refleak record -b --settle 0 -o "/out/$name-b.data" -- \
			perf refleak record --refs "$refs" -o "/out/$name.data" -- \
			./trigger "$name" "$n" > "/out/$name.log" 2>&1
		rc=$?
	fi
	echo $rc > "/out/$name.rc"
	tail -n 3 "/out/$name.log"
done
echo "realbugs: finished"
