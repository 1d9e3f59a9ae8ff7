#!/bin/sh
# perf refleak: recordings cut short (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# A recording that did not finish is read as far as it goes: the report
# says it was cut short (text and --json), and 'report --fail-on-leak'
# exits 4 (cannot tell) unless a definite or likely finding stands (3).
# The test driver (lib/test_refleak.c) makes 3 objects whose last
# reference is put and never freed (definite), then the command keeps
# the kernel busy and sleeps until it is killed:
#  - a file recording killed with SIGKILL: the objects are found;
#  - a file recording into a tmpfs it fills;
#  - a pipe whose recorder is killed with SIGKILL;
#  - record -b, a checkpoint every 2 s, killed with SIGKILL after two
#    checkpoints made after the objects: the report reads the last
#    checkpoint in place of the output cut short, and finds them;
#  - record -b that finishes after checkpoints: no checkpoint is left,
#    and its report is whole.
#
# Exit: 0 pass, 1 fail, 2 skip (reason printed).

# shellcheck source=lib/refleak_bpf.sh
. "$(dirname "$0")"/lib/refleak_bpf.sh

err=0
tmpdir=
small=
drv=/sys/kernel/debug/test_refleak

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[ -w "$drv/control" ] && echo reclaim > "$drv/control" 2> /dev/null
	[ -n "$small" ] && umount "$small" 2> /dev/null
	refleak_rm_tmpdir "$tmpdir"
	trap - EXIT INT TERM
}
# shellcheck disable=SC2154 # st is set inside the trap
trap 'st=$?; cleanup; exit $st' EXIT
trap 'err=1; exit 1' INT TERM

[ "$(id -u)" = 0 ] || { echo "[Skip] No root permission"; exit 2; }
if [ ! -w "$drv/control" ]; then
	echo "[Skip] No test driver $drv (CONFIG_TEST_REFLEAK)"
	exit 2
fi
tmpdir=$(mktemp -d /tmp/__perf_test_refleak_cut.XXXXXX) || exit 1

# The recorded command: the driver's objects, the kernel kept busy (so that
# perf record writes what its ring buffers hold), "busy" on stdout, a
# sleep until it is killed (its pid in sleeper.sh.pid).
sleeper=$tmpdir/sleeper.sh
# shellcheck disable=SC2016 # expanded by the sleeper
echo 'echo $$ > "$0.pid"; exec sleep 60' > "$sleeper"
work=$tmpdir/work.sh
cat > "$work" << EOF
echo put_no_free 3 cache > $drv/control || exit 1
i=0
while [ \$i -lt 400 ]; do
	cat /proc/self/status /proc/self/maps > /dev/null
	i=\$((i + 1))
done
echo busy
exec sh $sleeper
EOF

# wait_for <file> <extended regex> <count> <pid>: until <file> has <count>
# lines matching, while <pid> runs, at most 60 s
wait_for() {
	n=0
	while [ "$(grep -cE "$2" "$1" 2> /dev/null)" -lt "$3" ] && kill -0 "$4" 2> /dev/null &&
		[ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ "$(grep -cE "$2" "$1" 2> /dev/null)" -ge "$3" ]
}

# kill_recording <pid>: SIGKILL perf, then its command (left running)
kill_recording() {
	kill -9 "$1" 2> /dev/null
	wait "$1" 2> /dev/null
	[ -f "$sleeper.pid" ] && kill "$(cat "$sleeper.pid")" 2> /dev/null
	rm -f "$sleeper.pid"
	echo reclaim > "$drv/control"
}

# report <input> <options...>: perf refleak report of a file, or of a
# pipe's stream (pipe:<file>) on stdin
report() {
	case $1 in
	pipe:*)
		in=${1#pipe:}
		shift
		perf refleak report -i - "$@" < "$in"
		;;
	*)
		in=$1
		shift
		perf refleak report -i "$in" "$@"
		;;
	esac
}

# judge <name> <input>: the report says the recording was cut short, text
# and JSON; --fail-on-leak exits 3 with a definite or likely finding, 4
# without; <name>.found: the driver's objects found
judge() {
	name=$1 input=$2
	report "$input" > "$tmpdir/$name.txt" 2> "$tmpdir/$name.err"
	rc=$?
	if [ $rc = 0 ] && grep -q '^# cut short: ' "$tmpdir/$name.txt"; then
		pass "$name: report exit 0, $(grep -A1 '^# cut short: ' "$tmpdir/$name.txt" |
			tr -d '#\n' | tr -s ' ')"
	else
		fail "$name: report exit $rc, cut short not said:"
		head -n 12 "$tmpdir/$name.txt" "$tmpdir/$name.err"
		return
	fi
	report "$input" --json > "$tmpdir/$name.json" 2> /dev/null
	if grep -q '"cut_short": true' "$tmpdir/$name.json"; then
		pass "$name: --json says cut_short"
	else
		fail "$name: --json does not say cut_short"
	fi
	suspicious=$(sed -n 's/.*"tiers": {"definite": \([0-9]*\), "likely": \([0-9]*\).*/\1 \2/p' \
		"$tmpdir/$name.json" | awk '{ print $1 + $2 }')
	report "$input" --fail-on-leak > /dev/null 2>&1
	rc=$?
	if { [ "${suspicious:-0}" -gt 0 ] && [ $rc = 3 ]; } ||
		{ [ "${suspicious:-0}" = 0 ] && [ $rc = 4 ]; }; then
		pass "$name: --fail-on-leak exits $rc with $suspicious definite or likely findings"
	else
		fail "$name: --fail-on-leak exits $rc with ${suspicious:-no}" \
			"definite or likely findings"
	fi
	found='^  {"class": "final_put_not_freed", "tier": "definite",'
	found="$found"' "site": "test_refleak_put_no_free+0x[0-9a-f]*", .*"count": 3,'
	grep -q "$found" "$tmpdir/$name.json" && : > "$tmpdir/$name.found"
}

# A file recording killed once the command is busy.
perf refleak record -o "$tmpdir/killed.data" -- sh "$work" \
	> "$tmpdir/killed.out" 2> "$tmpdir/killed.rec" &
rec=$!
wait_for "$tmpdir/killed.out" '^busy' 1 $rec
sleep 1
kill_recording $rec
judge killed "$tmpdir/killed.data"
if [ -f "$tmpdir/killed.found" ]; then
	pass "killed: the 3 objects put and not freed are found, definite"
else
	fail "killed: the 3 objects put and not freed are not found:"
	head -n 30 "$tmpdir/killed.txt"
fi

# A file recording into a tmpfs that it fills: perf record stops.
small=$tmpdir/small
mkdir "$small"
if mount -t tmpfs -o size=1m tmpfs "$small"; then
	perf refleak record -m 8 -o "$small/full.data" -- sh "$work" \
		> "$tmpdir/full.out" 2> "$tmpdir/full.rec" &
	rec=$!
	wait_for "$tmpdir/full.rec" 'No space left|failed to write' 1 $rec
	kill_recording $rec
	if grep -qE 'No space left|failed to write' "$tmpdir/full.rec"; then
		pass "full: perf record stopped, $(du -k "$small/full.data" | cut -f1) KiB written"
	else
		fail "full: perf record did not fill $small:"
		tail -n 5 "$tmpdir/full.rec"
	fi
	judge full "$small/full.data"
	umount "$small" && small=
else
	fail "full: cannot mount a tmpfs"
fi

# A pipe whose recorder is killed.
perf refleak record -o - -- sh "$work" > "$tmpdir/pipe.data" 2> "$tmpdir/pipe.rec" &
rec=$!
wait_for "$tmpdir/pipe.rec" '^busy' 1 $rec
sleep 1
kill_recording $rec
judge pipe "pipe:$tmpdir/pipe.data"

# record -b: checkpoints, then SIGKILL (skipped, with the reason, without
# BPF skeletons or BTF)
if ! (refleak_bpf_skip_unless_ready "record -b"); then
	exit $err
fi
perf refleak record -b --checkpoint 2 --settle 0 -o "$tmpdir/ckpt.data" -- sh "$sleeper" \
	> /dev/null 2> "$tmpdir/ckpt.rec" &
rec=$!
wait_for "$tmpdir/ckpt.rec" '^\[ perf refleak: counting in the kernel' 1 $rec
echo put_no_free 3 cache > "$drv/control"
dumps=$(grep -c '^\[ perf record: Dump' "$tmpdir/ckpt.rec")
wait_for "$tmpdir/ckpt.rec" '^\[ perf record: Dump' $((dumps + 2)) $rec
kill_recording $rec
left=$(find "$tmpdir" -maxdepth 1 -name 'ckpt.data.*' | wc -l)
if [ "$left" = 1 ]; then
	pass "checkpoint: $(grep -c '^\[ perf record: Dump' "$tmpdir/ckpt.rec") written," \
		"the last kept"
else
	fail "checkpoint: $left checkpoints left (one expected):"
	cat "$tmpdir/ckpt.rec"
fi
judge checkpoint "$tmpdir/ckpt.data"
if grep -q 'cut short after a checkpoint: reading' "$tmpdir/checkpoint.err"; then
	pass "checkpoint: the report reads the last checkpoint"
else
	fail "checkpoint: the report does not say it reads the last checkpoint:"
	cat "$tmpdir/checkpoint.err"
fi
if [ -f "$tmpdir/checkpoint.found" ]; then
	pass "checkpoint: the 3 objects put and not freed before it are found, definite"
else
	fail "checkpoint: the 3 objects put and not freed are not found:"
	head -n 30 "$tmpdir/checkpoint.txt"
fi

# record -b that finishes after a checkpoint: none is left, the report whole
perf refleak record -b --checkpoint 1 --settle 0 -o "$tmpdir/whole.data" -- sleep 3 \
	> /dev/null 2> "$tmpdir/whole.rec"
left=$(find "$tmpdir" -maxdepth 1 -name 'whole.data.*' | wc -l)
if grep -q '^\[ perf record: Dump' "$tmpdir/whole.rec" && [ "$left" = 0 ] &&
	perf refleak report -i "$tmpdir/whole.data" --json 2> /dev/null |
	grep -q '"cut_short": false'; then
	pass "finished: $(grep -c '^\[ perf record: Dump' "$tmpdir/whole.rec") checkpoints," \
		"none left, the report not cut short"
else
	fail "finished: $left checkpoints left, or its report is cut short:"
	cat "$tmpdir/whole.rec"
fi
exit $err
