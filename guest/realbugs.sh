#!/bin/sh
# Runs inside the guest for 'make realbugs' (as /guest/run.sh): each case
# of tests/realbugs/cases triggered REALBUGS_N times from userspace under
# perf refleak record, with every get and put of the case's cache
# (--refs).  The host reports on the recordings; the same script runs on
# the kernel with the upstream bugs and on the one without them.
cd /guest || exit 1
n=$(cat ./realbugs-n 2>/dev/null || echo 20)
ifconfig lo 127.0.0.1 up 2>/dev/null
cat /proc/kallsyms > /out/kallsyms
grep -v '^#' ./cases | while read -r name _patch _site _cache refs _get; do
	[ -n "$name" ] || continue
	echo "realbugs: $name x$n (--refs $refs)"
	# every get and put of the leaking cache: the report names the get
	perf refleak record --refs "$refs" -o "/out/$name.data" -- ./trigger "$name" "$n" \
		> "/out/$name.log" 2>&1
	echo $? > "/out/$name.rc"
	tail -n 3 "/out/$name.log"
done
echo "realbugs: finished"
