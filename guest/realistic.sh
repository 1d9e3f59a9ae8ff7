#!/bin/sh
# Runs inside the realistic guest (x86_64 defconfig + our options) for
# 'make realistic': the balanced mixed workload under perf refleak record;
# the host reads the recording.
cd /guest || exit 1
ifconfig lo 127.0.0.1 up 2>/dev/null
cat /proc/kallsyms > /out/kallsyms
uname -r > /out/uname
mkdir -p /out/kunit
for d in /sys/kernel/debug/kunit/*/; do
	[ -f "$d/results" ] && cp "$d/results" "/out/kunit/$(basename "$d").ktap"
done
perf refleak record -o /out/balanced.data --settle 3 -- ./balanced -t 20 -s 0 -H \
	> /out/balanced.log 2>&1
echo $? > /out/balanced.rc
tail -n 3 /out/balanced.log
