#!/bin/sh
# Runs inside the guest for 'make long-run' (not in make check): one
# 'perf refleak record -b -v' of the balanced workload with its holder (-H:
# objects kept alive past the end, as a service keeps them) for
# long-run-seconds (default 7200), a checkpoint a minute.  At 10 min, 1 h
# and just before the end it notes the bytes the output and its checkpoint
# hold and perf's RSS, and keeps the checkpoint for the host's report
# (findings, misses, objects followed); then the output itself.
cd /guest || exit 1
t=7200
[ -f ./long-run-seconds ] && t=$(cat ./long-run-seconds)
ifconfig lo 127.0.0.1 up 2>/dev/null
cat /proc/kallsyms > /out/kallsyms
now() { read -r up _ < /proc/uptime; echo "${up%.*}"; }

perf refleak record -b -v --checkpoint 60 -o /tmp/long.data -- ./balanced -t "$t" -s 0 -H \
	> /out/long.out 2> /out/long.err &
rec=$!
start=$(now)
# snapshot <label>: sizes, perf's RSS, the last checkpoint
snapshot() {
	out=$(wc -c < /tmp/long.data 2> /dev/null || echo 0)
	ckpt=$(ls /tmp/long.data.* 2> /dev/null | tail -n 1)
	csize=0
	[ -n "$ckpt" ] && csize=$(wc -c < "$ckpt") && cp "$ckpt" "/out/long-$1.data"
	rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$rec/status")
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$rec/status")
	echo "$1 $(($(now) - start)) $out $csize ${rss:-0} ${hwm:-0}" >> /out/long.marks
	echo "long-run: $1: output $out bytes, checkpoint $csize bytes, RSS ${rss:-?} kB (most ${hwm:-?})"
}
for mark in 600:10min 3600:1h $((t - 90)):end; do
	at=${mark%%:*}
	[ "$at" -lt "$t" ] || continue
	while [ $(($(now) - start)) -lt "$at" ] && kill -0 $rec 2> /dev/null; do
		sleep 10
	done
	kill -0 $rec 2> /dev/null && snapshot "${mark#*:}"
done
wait $rec
echo "$?" > /out/long.rc
cp /tmp/long.data /out/long-final.data
ls /tmp/long.data.* > /out/long.left 2> /dev/null
echo "long-run: finished"
