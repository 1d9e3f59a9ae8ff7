#!/bin/sh
# Runs inside the guest (as /guest/run.sh) for 'make check', booted with
# notsc: the kernel's clock counts in ticks, as in a guest whose TSC the
# kernel gave up on, and events a tick apart share one time.  The balanced
# workload again: no finding may rest on the order of events in one tick.
cd /guest || exit 1
. ./lib.sh

cat /sys/devices/system/clocksource/clocksource0/current_clocksource > "$res/clocksource"
cat /proc/kallsyms > "$res/kallsyms"
. ./balanced.sh
echo "guest-check: finished"
