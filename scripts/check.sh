#!/usr/bin/env bash
# make check: build everything, run the host tests, boot the guest once to
# run the guest checks, judge the results. Each check prints one PASS, FAIL
# or SKIP line (with a reason); the run closes with "N passed, N failed, N
# skipped" and exits non-zero if anything failed.
. "$(dirname "$0")/lib.sh"
set +e

passed=0 failed=0 skipped=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1: $2"; skipped=$((skipped + 1)); }
# Judge an exit status: 0 pass, 2 skip (the test printed why), else fail.
judge() { # <name> <rc> <log>
	case $2 in
	0) pass "$1" ;;
	2) skip "$1" "$(tail -n 1 "$3")" ;;
	*) fail "$1" "exit $2, see $3"; tail -n 15 "$3" | sed 's/^/    /' ;;
	esac
}
# Builds and the checkpatch run either work or fail; they never skip.
judge_strict() { # <name> <rc> <log>
	if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1" "exit $2, see $3"; tail -n 15 "$3" | sed 's/^/    /'; fi
}
finish() {
	echo
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}
logs=$BUILD/check
rm -rf "$logs" && mkdir -p "$logs"

# 1. host tests of the pipeline scripts
for t in "$TOP"/tests/host/pipeline-*.sh; do
	n=host:$(basename "$t" .sh)
	bash "$t" > "$logs/${n#host:}.log" 2>&1
	judge "$n" $? "$logs/${n#host:}.log"
done

# 2. the kernel series is checkpatch-clean
if [ -s "$TOP/kernel/series" ]; then
	tree=$("$TOP/scripts/assemble-tree.sh") && bash "$TOP/scripts/checkpatch-series.sh" "$tree" > "$logs/checkpatch.log" 2>&1
	judge_strict series:checkpatch $? "$logs/checkpatch.log"
else
	skip series:checkpatch "kernel/series is empty: no kernel patches yet"
fi

# 3. builds (a failed build fails every check that needs it)
"$TOP/scripts/build-perf.sh" > "$logs/build-perf.log" 2>&1
perf_rc=$?
judge_strict build:perf $perf_rc "$logs/build-perf.log"
# the engine's unit tests, on the host (the guest runs them again)
if [ $perf_rc -eq 0 ]; then
	"$BUILD/perf" test -v "refleak correlation engine" > "$logs/host-perf-test.log" 2>&1
	n=$(grep -cE '^ *[0-9]+\.[0-9]+: .*: Ok$' "$logs/host-perf-test.log")
	if [ "$n" -gt 0 ] && ! grep -qE ': FAILED!|: Skip' "$logs/host-perf-test.log"; then
		pass "host:perf-test-engine ($n subtests)"
	else
		fail host:perf-test-engine "see $logs/host-perf-test.log"
		grep -E 'FAILED|Skip' "$logs/host-perf-test.log" | head | sed 's/^/    /'
	fi
fi
# perf refleak report on the committed golden fixtures (nothing booted)
if [ $perf_rc -eq 0 ] && [ -f "$TOP/tests/host/golden.sh" ]; then
	bash "$TOP/tests/host/golden.sh" "$BUILD/perf" > "$logs/golden.log" 2>&1
	judge host:golden $? "$logs/golden.log"
	bash "$TOP/tests/host/report-summary.sh" "$BUILD/perf" > "$logs/report-summary.log" 2>&1
	judge host:report-summary $? "$logs/report-summary.log"
fi
"$TOP/scripts/build-kernel.sh" > "$logs/build-kernel.log" 2>&1
kernel_rc=$?
judge_strict build:kernel $kernel_rc "$logs/build-kernel.log"
if [ $perf_rc -ne 0 ] || [ $kernel_rc -ne 0 ]; then
	fail guest "not booted: a build failed"
	finish
fi

# 4. the guest
out=$BUILD/guest-check
"$TOP/scripts/make-initramfs.sh" > "$logs/initramfs.log" 2>&1 &&
bins=$("$TOP/scripts/build-guest-bins.sh" 2>>"$logs/initramfs.log") &&
# about 8 minutes here: the stock-workload shell test alone takes minutes
GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} "$TOP/scripts/run-guest.sh" "$TOP/guest/check.sh" "$out" \
	"$TOP/guest/lib.sh" "$TOP/guest/balanced.sh" \
	$(ls "$TOP"/kernel/tests/*.sh 2>/dev/null) $bins > "$logs/guest.log" 2>&1
rc=$?
judge_strict guest:boot $rc "$logs/guest.log"
[ $rc -eq 0 ] || finish

# KUnit: the boot-time run's KTAP, parsed by the kernel's own parser.
kunit=$("$TOP/scripts/assemble-tree.sh")/tools/testing/kunit/kunit.py
if [ -n "$(ls "$out"/kunit/*.ktap 2>/dev/null)" ]; then
	for f in "$out"/kunit/*.ktap; do
		n=kunit:$(basename "$f" .ktap)
		python3 "$kunit" parse "$f" > "$logs/$n.log" 2>&1
		judge "$n" $? "$logs/$n.log"
	done
fi
if grep -qs '^CONFIG_REF_TRACE_KUNIT_TEST=y' "$KBUILD/.config"; then
	[ -f "$out/kunit/ref_trace.ktap" ] || fail kunit:ref_trace "the suite did not run in the guest"
else
	skip kunit:ref_trace "the guest kernel has no CONFIG_REF_TRACE_KUNIT_TEST (series not applied)"
fi

# kmem tracepoints with callchains, recorded in the guest, read on the host
# with the guest's symbols.
if [ "$(cat "$out/kmem-record.rc" 2>/dev/null)" = 0 ]; then
	"$BUILD/perf" report --stdio -i "$out/kmem.data" --kallsyms "$out/kallsyms" \
		--sort sym > "$logs/kmem-report.log" 2>&1
	if grep -Eq '\[k\] [a-z_]+' "$logs/kmem-report.log" && grep -q 'kmem:kmalloc' "$logs/kmem-report.log"; then
		pass guest:kmem-record
	else
		fail guest:kmem-record "host perf report found no kernel symbols (see $logs/kmem-report.log)"
	fi
else
	fail guest:kmem-record "perf record in the guest failed: $(tail -n 3 "$out/kmem-record.log" 2>/dev/null)"
fi

for n in tracepoint; do
	if [ -f "$out/$n.rc" ]; then
		judge "guest:$n" "$(cat "$out/$n.rc")" "$out/$n.log"
	else
		skip "guest:$n" "no guest check script for it yet (kernel/tests/)"
	fi
done

# The balanced real workload (guest/balanced.sh), reported here on the
# guest's recording <out>/<recording>.data: no definite and no likely
# finding, --fail-on-leak exits 0 (with -b 4 too: events missed in the
# kernel, which the pass line shows).  0 if it passed.
judge_balanced() { # <name> <out> <recording> <report log> [report options...]
	local name=$1 dir=$2 rec=$3 log=$4 rc missed
	shift 4
	if [ ! -f "$dir/$rec-record.rc" ]; then
		fail "$name" "the guest did not run it (guest/workload/balanced.c not built?)"
		return 1
	fi
	if [ "$(cat "$dir/$rec-record.rc")" != 0 ]; then
		fail "$name" "recording failed: $(tail -n 3 "$dir/$rec-record.log")"
		return 1
	fi
	"$BUILD/perf" refleak report -i "$dir/$rec.data" --kallsyms "$dir/kallsyms" \
		--fail-on-leak "$@" > "$log" 2>&1
	rc=$?
	missed=$(sed -n 's/^# \(missed in the kernel: .*\)/; \1/p' "$log")
	if [ $rc -eq 0 ] || { [ $rc -eq 4 ] && [ -n "$missed" ]; }; then
		pass "$name ($(grep -o '[0-9]* iterations in [0-9.]* s' "$dir/$rec-record.log" | tail -n 1); $(stat -c %s "$dir/$rec.data") bytes; $(sed -n 's/^# findings: //p' "$log")$missed)"
		return 0
	fi
	fail "$name" "report --fail-on-leak exited $rc, see $log"
	head -n 40 "$log" | sed 's/^/    /'
	grep '^# missed in the kernel' "$log" | sed 's/^/    /'
	return 1
}

if judge_balanced guest:balanced-workload "$out" balanced "$logs/balanced-report.log" -g; then
	# perf record writes no record twice (perf-series/patches/0003):
	# the report counts a sample identical to its CPU's previous one
	copies=$(sed -n "s/^# copies of their CPU's previous sample (dropped): //p" \
		"$logs/balanced-report.log")
	if [ -z "$copies" ]; then
		pass guest:record-writes-no-copies
	else
		fail guest:record-writes-no-copies "$copies samples written twice by perf record"
	fi
	# the guest kernel follows file_ref_t and rcuref_t (patches 7
	# and 8), and the report reads that from the recording
	line=$(grep '^# counters not followed: ' "$logs/balanced-report.log")
	case $line in
	'# counters not followed: atomic_t, lockref '*) pass guest:counter-types-followed ;;
	*) fail guest:counter-types-followed "the report says: ${line:-nothing}" ;;
	esac
fi
# The same workload recorded with -b
judge_balanced guest:balanced-workload-bpf "$out" balanced-bpf "$logs/balanced-bpf-report.log"
# ... and with the gets and puts of files, sockets and pids (--refs)
judge_balanced guest:balanced-workload-refs "$out" balanced-refs "$logs/balanced-refs-report.log"

# perf test refleak in the guest: every test it selects must pass.
log=$out/perf-test-refleak.log
if ! grep -q ': Ok\|FAILED\|: Skip' "$log" 2>/dev/null; then
	fail guest:perf-test-refleak "perf test selected no refleak test"
else
	grep -E '^ *[0-9]+(\.[0-9]+)?: .*: (Ok|FAILED!|Skip.*)$' "$log" |
		sed -E 's/^ *[0-9.]+: (.*[^ ]) *: (Ok|FAILED!|Skip.*)$/\1\t\2/' > "$logs/perf-test.results"
	while IFS=$'\t' read -r name status; do
		case $status in
		Ok) pass "perf-test:$name" ;;
		Skip*) skip "perf-test:$name" "$status" ;;
		*) fail "perf-test:$name" "see $log"
		   grep -A 50 "^\[FAIL\]" "$log" | head -n 100 | sed "s/^/    /" ;;
		esac
	done < "$logs/perf-test.results"
fi

# The balanced workload again, in a guest booted with notsc: its clock
# counts in ticks (guest/coarse-clock.sh)
coarse=$BUILD/guest-coarse-clock
GUEST_CMDLINE=notsc "$TOP/scripts/run-guest.sh" "$TOP/guest/coarse-clock.sh" "$coarse" \
	"$TOP/guest/lib.sh" "$TOP/guest/balanced.sh" $bins > "$logs/guest-coarse-clock.log" 2>&1
rc=$?
judge_strict guest:coarse-clock-boot $rc "$logs/guest-coarse-clock.log"
if [ $rc -eq 0 ]; then
	clock=$(cat "$coarse/clocksource" 2>/dev/null)
	case $clock in
	*jiffies*)
		judge_balanced guest:coarse-clock:balanced-workload "$coarse" balanced \
			"$logs/coarse-clock-balanced-report.log"
		judge_balanced guest:coarse-clock:balanced-workload-bpf "$coarse" balanced-bpf \
			"$logs/coarse-clock-balanced-bpf-report.log"
		judge_balanced guest:coarse-clock:balanced-workload-refs "$coarse" balanced-refs \
			"$logs/coarse-clock-balanced-refs-report.log" ;;
	*) fail guest:coarse-clock "booted with notsc, the guest's clock is '${clock:-unknown}', not jiffies" ;;
	esac
fi

# 5. real upstream reference leaks, reintroduced (tests/realbugs/): each must
# be found with the bug and not without it
if [ -s "$TOP/tests/realbugs/cases" ]; then
	"$TOP/scripts/realbugs.sh" > "$logs/realbugs.log" 2>&1
	grep -E '^(PASS|FAIL|SKIP) ' "$logs/realbugs.log" > "$logs/realbugs.results"
	[ -s "$logs/realbugs.results" ] || fail realbugs "no result, see $logs/realbugs.log"
	while read -r status rest; do
		name=${rest%%:*}
		case $status in
		PASS) pass "realbugs:$name (${rest#*: found })" ;;
		SKIP) skip "realbugs:$name" "${rest#*: }" ;;
		*) fail "realbugs:$name" "${rest#*: }" ;;
		esac
	done < "$logs/realbugs.results"
fi

# 6. perf refleak on bad input, with AddressSanitizer and UBSan
if [ -f "$TOP/tests/host/bad-input.sh" ]; then
	if "$TOP/scripts/build-perf.sh" --asan > "$logs/build-perf-asan.log" 2>&1; then
		bash "$TOP/tests/host/bad-input.sh" "$BUILD/perf-asan" > "$logs/bad-input.log" 2>&1
		judge host:bad-input $? "$logs/bad-input.log"
		# the engine's unit tests under AddressSanitizer and UBSan.  -F: in
		# perf test's forked children, GCC 12's slow unwinder (for malloc
		# stacks) sometimes aborts on an internal CHECK ("count < size",
		# empty stack) before the test runs to its end; in one process it
		# does not, and every sanitizer check stays on.
		ASAN_OPTIONS=fast_unwind_on_malloc=0 \
		LSAN_OPTIONS=suppressions=$TOP/tests/host/lsan.supp:print_suppressions=0 \
			"$BUILD/perf-asan" test -F -v "refleak correlation engine" \
			> "$logs/asan-perf-test.log" 2>&1
		n=$(grep -cE '^ *[0-9]+\.[0-9]+: .*: Ok$' "$logs/asan-perf-test.log")
		if [ "$n" -gt 0 ] && ! grep -qE ': FAILED!|ERROR: (Address|Leak)Sanitizer|runtime error' \
			"$logs/asan-perf-test.log"; then
			pass "host:asan-perf-test-engine ($n subtests)"
		else
			fail host:asan-perf-test-engine "see $logs/asan-perf-test.log"
		fi
	else
		fail build:perf-asan "see $logs/build-perf-asan.log"
	fi
fi

finish
