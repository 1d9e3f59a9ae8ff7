#!/bin/sh
# perf refleak record -b (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# 'perf refleak record -b' keeps the objects in BPF maps and writes only
# what is not balanced.  Each workload is recorded twice in the same run:
# by 'record -b' around the plain 'perf refleak record', so that both see
# the same kernel events.  Their reports must give the same definite and
# likely findings (class, tier, site, count, from --json):
#  - the test driver's scenarios (lib/test_refleak.c), when it is there;
#  - 'perf bench sched messaging', where neither may find anything.
# The driver's error path recorded by -b alone: with the gets and puts
# kept in the kernel (the default, or --refs of its cache), the get never
# put is named, certain; with --no-gets-puts, or --refs of another cache,
# none is.
# A leak by a shell that exits at once, recorded by -b alone: likely, from
# the shell's exit, the recording lasting its settle.
# Then the driver's scenarios with a map of 16 objects: -b must say what it
# missed, count it as lost, and find nothing the plain recording did not.
#
# Exit: 0 pass, 1 fail, 2 skip (reason printed).

# shellcheck source=lib/refleak_bpf.sh
. "$(dirname "$0")"/lib/refleak_bpf.sh
# shellcheck source=lib/refleak_refs.sh
. "$(dirname "$0")"/lib/refleak_refs.sh

err=0
tmpdir=
drv=/sys/kernel/debug/test_refleak
reclaim_needed=0

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	if [ "$reclaim_needed" = 1 ] && [ -w "$drv/control" ]; then
		echo reclaim > "$drv/control" 2>/dev/null
	fi
	refleak_rm_tmpdir "$tmpdir"
	trap - EXIT INT TERM
}
# shellcheck disable=SC2154 # st is set inside the trap
trap 'st=$?; cleanup; exit $st' EXIT
trap 'err=1; exit 1' INT TERM

refleak_bpf_skip_unless_ready "record -b"
tmpdir=$(mktemp -d /tmp/__perf_test_refleak_bpf.XXXXXX) || exit 1

# what -b cannot do is a usage error (129), with one message
for args in "-o -" "--refs filp --no-gets-puts" "--kmem-only"; do
	# shellcheck disable=SC2086 # the options are split on purpose
	perf refleak record -b $args -- true > /dev/null 2> "$tmpdir/usage.err"
	rc=$?
	if [ "$rc" = 129 ] && [ "$(wc -l < "$tmpdir/usage.err")" = 1 ]; then
		pass "record -b $args: $(cat "$tmpdir/usage.err")"
	else
		fail "record -b $args exited $rc:"
		cat "$tmpdir/usage.err"
	fi
done

# "class tier site count uncertain" of each definite and likely finding
findings() { # <report --json output>
	class='"class": "\([^"]*\)", "tier": "\(definite\|likely\)", "site": "\([^"]*\)"'
	count='"cache": "[^"]*", "count": \([0-9]*\)'
	uncertain='"inferred": [0-9]*, "uncertain": \([0-9]*\)'
	sed -n "s/^  {$class, .*$count, .*$uncertain, .*/\1 \2 \3 \4 \5/p" "$1" | sort
}

# summary.<key> of a report --json output
summary() { # <file> <key>
	sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1" | head -n 1
}

# record <name> <perf refleak record -b options> -- <command>: the command
# recorded by -b into <name>-b.data and, inside it, plainly into <name>.data
record_both() {
	name=$1
	shift
	bopts=
	while [ "$1" != -- ]; do
		bopts="$bopts $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # the options are split on purpose
	if ! perf refleak record -b --settle 0 $bopts -o "$tmpdir/$name-b.data" -- \
		perf refleak record -o "$tmpdir/$name.data" -- "$@" \
		> "$tmpdir/$name.out" 2> "$tmpdir/$name.err"; then
		fail "$name: perf refleak record -b around perf refleak record"
		head -n 20 "$tmpdir/$name.err"
		return 1
	fi
	for f in "$name" "$name-b"; do
		perf refleak report -i "$tmpdir/$f.data" --json --all > "$tmpdir/$f.json" \
			2> "$tmpdir/$f.report.err" || {
			fail "$name: perf refleak report of $f.data"
			head -n 20 "$tmpdir/$f.report.err"
			return 1
		}
		findings "$tmpdir/$f.json" > "$tmpdir/$f.findings"
		perf refleak report -i "$tmpdir/$f.data" > "$tmpdir/$f.txt" 2>&1
	done
	echo "$name: $(wc -c < "$tmpdir/$name.data") bytes plainly," \
		"$(wc -c < "$tmpdir/$name-b.data") with -b"
	return 0
}

# the same findings, -b and plain; when the kernel side missed events,
# every -b verdict is uncertain: it may assert less, never another finding
same_findings() { # <name>
	cut -d' ' -f1-4 "$tmpdir/$1.findings" > "$tmpdir/$1.cmp"
	cut -d' ' -f1-4 "$tmpdir/$1-b.findings" > "$tmpdir/$1-b.cmp"
	lost=$(summary "$tmpdir/$1-b.json" lost_events)
	cut -d' ' -f1-3 "$tmpdir/$1.cmp" | sort > "$tmpdir/$1.sites"
	cut -d' ' -f1-3 "$tmpdir/$1-b.cmp" | sort > "$tmpdir/$1-b.sites"
	extra=$(awk 'NR == FNR { p[$0]; next } !($0 in p)' "$tmpdir/$1.sites" \
		"$tmpdir/$1-b.sites")
	if [ "${lost:-0}" != 0 ] && [ -z "$extra" ]; then
		pass "$1: $lost events missed in the kernel with -b, every verdict uncertain:" \
			"$(wc -l < "$tmpdir/$1-b.cmp") of $(wc -l < "$tmpdir/$1.cmp")" \
			"findings asserted, none the plain recording lacks"
	elif cmp -s "$tmpdir/$1.cmp" "$tmpdir/$1-b.cmp"; then
		pass "$1: the same definite and likely findings with -b" \
			"($(wc -l < "$tmpdir/$1.findings"))"
	else
		fail "$1: the findings differ (- plain, + -b):"
		diff -u "$tmpdir/$1.cmp" "$tmpdir/$1-b.cmp" | grep '^[-+][a-z]'
		grep '^# missed in the kernel' "$tmpdir/$1-b.txt"
		echo "# plain recording: $(summary "$tmpdir/$1.json" lost_events) events lost"
		# the definite findings' objects and stacks, to tell which is wrong;
		# the recordings too, where the caller keeps them
		if [ -n "${REFLEAK_TEST_KEEP:-}" ] && mkdir -p "$REFLEAK_TEST_KEEP"; then
			cp "$tmpdir/$1.data" "$tmpdir/$1-b.data" "$REFLEAK_TEST_KEEP/"
			cat /proc/kallsyms > "$REFLEAK_TEST_KEEP/kallsyms"
		fi
		for f in "$1" "$1-b"; do
			echo "$f.data:"
			perf refleak report -i "$tmpdir/$f.data" -g --objects --max-stack 6 \
				2> /dev/null |
				sed -n '/\[definite\]/,/^likely\|^possible/p' | head -n 60
		done
	fi
}

drive=$tmpdir/drive.sh
cat > "$drive" << 'EOF'
drv=$1
shift
while [ $# -ge 3 ]; do
	echo "$1 $2 $3" > "$drv/control" || exit 1
	shift 3
done
sleep 6
EOF
scenarios="balanced 7 cache balanced 3 kmalloc leak_ref 3 cache leak_all 3 cache
put_no_free 5 cache put_no_free 2 kmalloc free_no_put 4 cache percpu 2 cache
rcu 6 cache rcu 2 kmalloc put_after_free 3 cache double_put 2 cache
double_put 2 kmalloc"

if [ -w "$drv/control" ]; then
	echo reclaim > "$drv/control"
	reclaim_needed=1
	# shellcheck disable=SC2086 # the scenario list is split on purpose
	if record_both scenarios -- sh "$drive" "$drv" $scenarios; then
		if grep -q test_refleak_leak_ref "$tmpdir/scenarios.findings"; then
			same_findings scenarios
		else
			fail "scenarios: the plain recording did not find the driver's leaks"
			head -n 20 "$tmpdir/scenarios.findings"
		fi
	fi
	echo reclaim > "$drv/control"
else
	echo "[Note] No test driver ($drv, CONFIG_TEST_REFLEAK): its scenarios are not driven"
fi

# Every get and put, kept in the kernel: the objects the driver's error
# path leaks name the lookup's get (test_refleak_get under
# test_refleak_use) alone and certain, as 'record --refs' names it in
# refleak.sh; with --no-gets-puts, or the gets and puts of another cache
# alone, no get is named.  The shell that made them exits 2 s before the
# end: they are likely leaks, their owner gone.
if [ -w "$drv/control" ]; then
	for gp in gets-puts "refs=test_refleak_r?fs*" no-gets-puts refs=filp; do
		echo reclaim > "$drv/control"
		reclaim_needed=1
		data=$tmpdir/refs-$gp.data sum=$tmpdir/refs-$gp.sum
		err_file=$tmpdir/refs.err out_file=$tmpdir/refs.out
		ep="error_path 6 cache error_path_kref 6 cache"
		# shellcheck disable=SC2086 # the scenario list is split on purpose
		if ! perf refleak record -b "--$gp" --settle 2 -o "$data" -- \
				sh "$drive" "$drv" $ep > /dev/null 2> "$err_file" ||
			! perf refleak report -i "$data" --max-stack 2 > "$out_file" 2>&1; then
			fail "error path, -b --$gp: perf refleak record -b or report failed:"
			head -n 20 "$err_file"
			continue
		fi
		refleak_refs_summary "$out_file" > "$sum"
		if [ $gp = no-gets-puts ] || [ $gp = refs=filp ]; then
			if grep -q '^row likely_leak 6$' "$sum" && ! grep -q '^list' "$sum"; then
				pass "error path, -b --$gp: 6 likely leaks, no get named"
			else
				fail "error path, -b --$gp: expected 6 likely leaks, no get named:"
				cat "$sum"
			fi
		elif refleak_refs_named "$sum"; then
			pass "error path, -b --$gp: the 6 leaked objects name the lookup's get" \
				"in test_refleak_use, certain"
		else
			fail "error path, -b --$gp: expected one likely_leak row of 6 objects," \
				"each with one reference taken at test_refleak_get under" \
				"test_refleak_use, certain:"
			cat "$sum"
			sed -n '/likely_leak \[likely\]/,/^$/p' "$out_file" | head -n 40
		fi
	done
	echo reclaim > "$drv/control"
fi

# A leak by a shell that exits at once, recorded by -b alone with a 2-s
# settle: the recording lasts its settle and the leak is likely (owner
# exited).  It cannot force a recording whose last object written is
# long before its end: which objects are left late is the kernel's timing.
if [ -w "$drv/control" ]; then
	echo reclaim > "$drv/control"
	reclaim_needed=1
	if perf refleak record -b --settle 2 -o "$tmpdir/exited-b.data" -- \
		sh -c "echo leak_all 3 cache > $drv/control" > /dev/null 2> "$tmpdir/exited.err" &&
		perf refleak report -i "$tmpdir/exited-b.data" --json > "$tmpdir/exited-b.json" \
			2>> "$tmpdir/exited.err"; then
		secs=$(sed -n 's/.*"recording_s": \([0-9]*\).*/\1/p' "$tmpdir/exited-b.json")
		if [ "${secs:-0}" -ge 2 ]; then
			pass "exited: the -b recording lasts its settle ($secs s and more)"
		else
			fail "exited: the -b recording ends ${secs:-?} s after its first object," \
				"before its 2-s settle"
		fi
		if findings "$tmpdir/exited-b.json" |
			grep -q '^likely_leak likely test_refleak_leak_all+0x[0-9a-f]* 3 '; then
			pass "exited: the leak of a shell that exited is likely with -b"
		else
			fail "exited: the leak of a shell that exited is not likely with -b:"
			findings "$tmpdir/exited-b.json"
		fi
	else
		fail "exited: perf refleak record -b or report failed:"
		head -n 20 "$tmpdir/exited.err"
	fi
	echo reclaim > "$drv/control"
fi

# A system-wide -b recording (of the whole system while its command
# sleeps, the command started once the programs count): another process
# makes the driver's leaks as soon as the recording says that it counts,
# and they are found.  No signal stops it: a background job ignores
# SIGINT until perf record handles it.  5 s: on a loaded guest the shell
# that makes them may start a second or two after the line, and its
# objects must be --min-age old at the end.
if [ -w "$drv/control" ]; then
	echo reclaim > "$drv/control"
	reclaim_needed=1
	perf refleak record -b --settle 0 -o "$tmpdir/sys-b.data" -- sleep 5 \
		> /dev/null 2> "$tmpdir/sys.err" &
	rec=$!
	waited=0
	while ! grep -q '^\[ perf refleak: counting in the kernel' "$tmpdir/sys.err" &&
		kill -0 $rec 2> /dev/null; do
		sleep 0.1
		waited=$((waited + 1))
	done
	sh -c "echo leak_ref 3 cache > $drv/control"
	wait $rec
	if grep -q '^\[ perf refleak: counting in the kernel' "$tmpdir/sys.err" &&
		perf refleak report -i "$tmpdir/sys-b.data" --json > "$tmpdir/sys-b.json" \
			2>> "$tmpdir/sys.err"; then
		pass "system-wide: $(grep '^\[ perf refleak: counting' "$tmpdir/sys.err")"
		if findings "$tmpdir/sys-b.json" |
			grep -q '^[a-z_]* [a-z]* test_refleak_leak_ref+0x[0-9a-f]* 3 '; then
			pass "system-wide: the leaks made right after the start line are found"
		else
			fail "system-wide: the leaks made right after the start line are not found:"
			findings "$tmpdir/sys-b.json"
		fi
	else
		fail "system-wide: no start line in $((waited / 10)) s, or no report:"
		head -n 20 "$tmpdir/sys.err"
	fi
	echo reclaim > "$drv/control"
fi

if record_both stock -- perf bench sched messaging -g 1 -l 5; then
	same_findings stock
	if [ -s "$tmpdir/stock-b.findings" ]; then
		fail "stock: definite or likely findings with -b:"
		cat "$tmpdir/stock-b.findings"
	else
		pass "stock: no definite or likely finding with -b"
	fi
	n=$(summary "$tmpdir/stock-b.json" balanced)
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then
		pass "stock: $n balanced objects summed in the kernel"
	else
		fail "stock: no balanced object in the -b recording"
	fi
	# perf record -b runs with --no-tracking: the programs keep the
	# processes of the objects they follow, not every fork and exit.  The
	# workload makes 40 processes; the plain recording, nested in -b on a
	# busy guest, may lose some of their exit records.
	pe=$(perf report -D -i "$tmpdir/stock.data" 2> /dev/null | grep -c 'PERF_RECORD_EXIT')
	be=$(perf report -D -i "$tmpdir/stock-b.data" 2> /dev/null | grep -c 'PERF_RECORD_EXIT')
	lost=$(perf report --stats -i "$tmpdir/stock.data" 2> /dev/null | grep 'LOST')
	if [ $((be * 4)) -le 40 ]; then
		pass "stock: $be process exits written with -b, of the workload's 40"
	else
		fail "stock: $be process exits written with -b, of the workload's 40"
	fi
	if [ "$pe" -ge 40 ]; then
		pass "stock: $pe process exits in the plain recording"
	elif [ -n "$lost" ]; then
		echo "[Note] stock: $pe process exits in the plain recording, which lost events:"
		echo "$lost" | sed 's/^/    /'
	else
		fail "stock: $pe process exits in the plain recording, none lost"
	fi
fi

# A map too small: misses are counted, said and turned into lost events.
if [ -w "$drv/control" ]; then
	echo reclaim > "$drv/control"
	# shellcheck disable=SC2086 # the scenario list is split on purpose
	if record_both tiny --map-nr-entries 16 -- sh "$drive" "$drv" $scenarios; then
		lost=$(summary "$tmpdir/tiny-b.json" lost_events)
		if [ -n "$lost" ] && [ "$lost" -gt 0 ]; then
			pass "tiny map: $lost objects missed, counted as lost"
		else
			fail "tiny map: nothing missed with 16 objects"
		fi
		if grep -q '^# missed in the kernel: .*object map full [1-9]' \
			"$tmpdir/tiny-b.txt"; then
			pass "tiny map: the report says the object map was full"
		else
			fail "tiny map: the report does not say what was missed"
			grep '^# ' "$tmpdir/tiny-b.txt" | tail -n 5
		fi
		# Every -b leak is one of the plain recording's, no larger; another
		# finding may be seen with less of its object (an anomaly on an
		# object not followed is one of its own), marked uncertain.
		invented=$(awk 'NR == FNR { n[$1 " " $3] = $4; next }
			(!(($1 " " $3) in n) || $4 > n[$1 " " $3]) &&
			($1 ~ /leak|not_freed/ || $5 < $4)' \
			"$tmpdir/tiny.findings" "$tmpdir/tiny-b.findings")
		if [ -z "$invented" ]; then
			pass "tiny map: no leak the plain recording did not have," \
				"the other findings uncertain"
		else
			fail "tiny map: findings the plain recording did not have" \
				"(class tier site count uncertain):"
			echo "$invented"
		fi
	fi
fi
exit $err
