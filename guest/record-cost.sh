#!/bin/sh
# Runs inside the guest for 'make bench' (the recording table): the balanced
# real workload (guest/workload/balanced.c) for the same time without
# recording, under perf record of the kmem events alone (with and without
# callchains), of the kmem events and the final puts (the v4 event set),
# and under perf refleak record (every ref_trace event), also with every get
# and put of one cache (--refs), and with the objects followed in the
# kernel (-b, with their gets and puts and without; RECORD_COST_BPF_SECONDS
# adds a longer -b run).  Each leaves
# its iteration count, perf.data size and perf's own summary in /out.
cd /guest || exit 1
t=${RECORD_COST_SECONDS:-15}
[ -f ./record-cost-bpf-seconds ] && tb=$(cat ./record-cost-bpf-seconds)
ifconfig lo 127.0.0.1 up 2>/dev/null
kmem="-e kmem:kmalloc -e kmem:kmem_cache_alloc -e kmem:kfree -e kmem:kmem_cache_free"
# <label> <command...>: the workload under the command (perf options), or alone
run() {
	label=$1
	shift
	rm -f /tmp/cost.data
	if [ "$1" = none ]; then
		./balanced -t "$t" -s 0 > "/out/cost-$label.out" 2> "/out/cost-$label.err"
	else
		"$@" -o /tmp/cost.data -- ./balanced -t "$t" -s 0 \
			> "/out/cost-$label.out" 2> "/out/cost-$label.err"
	fi
	size=0
	[ -f /tmp/cost.data ] && size=$(wc -c < /tmp/cost.data)
	echo "$size" > "/out/cost-$label.size"
	echo "cost: $label: $(tail -n 1 "/out/cost-$label.out") $size bytes"
	# what -b wrote is small: kept, for the host to report on
	case $label in
	bpf*) [ -f /tmp/cost.data ] && mv /tmp/cost.data "/out/cost-$label.data" ;;
	esac
	rm -f /tmp/cost.data
}
cat /proc/kallsyms > /out/kallsyms
# Start-up: from the command to the line saying that the programs count
# (record -b), and each whole with nothing to record ('-- true').
# /proc/uptime: hundredths of a second.
now() { read -r up _ < /proc/uptime; echo "$up"; }
startup() { # <label> <perf refleak record options...>
	label=$1
	shift
	t0=$(now)
	perf refleak record "$@" -o /tmp/startup.data -- true 2>&1 > /dev/null |
		while read -r line; do
			case $line in
			"[ perf refleak: counting"*) now > /tmp/startup.line ;;
			esac
			echo "$line"
		done > "/out/startup-$label.err"
	t1=$(now)
	line=-
	[ -f /tmp/startup.line ] && line=$(awk -v a="$t0" -v b="$(cat /tmp/startup.line)" \
		'BEGIN { printf "%.2f", b - a }')
	echo "$label $line $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
		>> /out/startup.txt
	rm -f /tmp/startup.line /tmp/startup.data
}
rm -f /out/startup.txt
startup plain --settle 0
if [ -r /sys/kernel/btf/vmlinux ]; then
	startup bpf --settle 0 -b
	# -v: what the verifier did with each program
	startup bpf-v --settle 0 -b -v
fi
run none none
# shellcheck disable=SC2086 # the event list is split on purpose
run kmem-nocg perf record -a -R -c 1 -m 1024 $kmem
# shellcheck disable=SC2086
run kmem-g perf record -a -R -c 1 -m 1024 -g --kernel-callchains $kmem
# shellcheck disable=SC2086
run kmem-put-g perf record -a -R -c 1 -m 1024 -g --kernel-callchains $kmem \
	-e ref_trace:ref_trace_final_put
run refleak perf refleak record --settle 0
if [ -r /sys/kernel/btf/vmlinux ]; then
	# the workload alone again, which -b is compared with: under TCG a
	# guest's throughput drifts in the course of a boot
	run none-again none
	# -v: how full the maps were, printed at the end
	run bpf perf refleak record -b -v --settle 0
	run bpf-lifetimes perf refleak record -b -v --no-gets-puts --settle 0
	if [ -n "$tb" ]; then
		t=$tb run bpf-long perf refleak record -b -v --settle 0
	fi
fi
# every get and put of one busy cache (struct pid: fork, exit, signals,
# /proc), and of one the workload never uses: what the filter costs alone
if perf list 2>/dev/null | grep -q ref_trace:ref_trace_ref; then
	run refs-pid perf refleak record --settle 0 --refs pid
	run refs-none perf refleak record --settle 0 --refs test_refleak_refs
fi
