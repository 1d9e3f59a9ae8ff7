# Sourced by a guest run script (with lib.sh): no false findings on a real
# workload nobody here wrote the kernel paths of: fork/exec, files, pipes,
# IPC, namespaces, keys, timers, sockets, for 20 s, with a holder (-H)
# that legitimately keeps objects of the same kinds alive past the end of
# the recording, and a second perf session beside.  Recorded plainly and
# with -b; the host reports on the recordings (faster than TCG).

# A second perf session beside a recording: another 'perf refleak record
# -b', started by the recorded command as the workload starts and still
# running when the recording ends, whose event and BPF descriptors, opened
# while its probes came and went at the same stack, are open for its
# whole life.
beside='perf refleak record -b --settle 0 -o /tmp/beside.data -- sleep 600 \
	> /dev/null 2> /tmp/beside.err & echo $! > /tmp/beside.pid; exec "$@"'
beside_stop() {
	kill -INT "$(cat /tmp/beside.pid)" 2> /dev/null
	i=0
	while kill -0 "$(cat /tmp/beside.pid)" 2> /dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^\[ perf refleak: counting in the kernel' /tmp/beside.err ||
		echo "guest-check: the perf session beside did not start: $(tail -n 2 /tmp/beside.err)"
	rm -f /tmp/beside.data* /tmp/beside.pid
}

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
		sh -c "$beside" sh ./balanced -t 20 -s 0 -H
	beside_stop
	wait_holder
	# The same, its objects followed in the kernel (record -b).
	run balanced-bpf-record perf refleak record -b -o "$res/balanced-bpf.data" --settle 3 -- \
		sh -c "$beside" sh ./balanced -t 20 -s 0 -H
	beside_stop
	wait_holder
	# Shorter, with every get and put of files, sockets and pids: the
	# holder's files and sockets got close() as the others did.
	run balanced-refs-record perf refleak record --refs filp,UDP,TCP,pid \
		-o "$res/balanced-refs.data" --settle 3 -- ./balanced -t 10 -s 0 -H
	wait_holder
fi
