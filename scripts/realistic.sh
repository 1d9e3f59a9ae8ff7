#!/usr/bin/env bash
# make realistic: the realistic guest kernel (KERNEL_FLAVOR=realistic:
# x86_64 defconfig + our options), booted with the balanced mixed workload
# (guest/workload/balanced.c: fork/exec, files, pipes, IPC, namespaces,
# keys, timers, TCP/UDP over loopback, unix sockets; with -H, a holder
# keeping such objects alive past the end) under perf refleak record for
# 20 s.  Prints what the small guest cannot show: event rates by
# type, lost events at the default buffers, refcounted sites, and the
# findings, which should be none.  Exit status: the report's --fail-on-leak.
. "$(dirname "$0")/lib.sh"
out=$BUILD/realistic
KERNEL_FLAVOR=realistic "$TOP/scripts/build-kernel.sh" >&2
"$TOP/scripts/build-perf.sh" >&2
"$TOP/scripts/make-initramfs.sh" >&2
bins=$("$TOP/scripts/build-guest-bins.sh")
# REALISTIC_REUSE=1 reports on the previous run's recording again
[ "${REALISTIC_REUSE:-0}" = 1 ] && [ -f "$out/balanced.data" ] ||
# shellcheck disable=SC2086 # one path a word
BZIMAGE=$BUILD/bzImage-realistic GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} \
	"$TOP/scripts/run-guest.sh" "$TOP/guest/realistic.sh" "$out" $bins >&2 ||
	die "the realistic guest failed (see $out/console.log)"
[ "$(cat "$out/balanced.rc")" = 0 ] || die "recording failed: $(tail -n 5 "$out/balanced.log")"
report() { "$BUILD/perf" refleak report -i "$out/balanced.data" --kallsyms "$out/kallsyms" "$@"; }
report -g > "$out/report.txt" 2>&1
report --all --json > "$out/report.json" 2> /dev/null
report --all -g > "$out/report-all.txt" 2>&1
rc=0
report --fail-on-leak > /dev/null 2>&1 || rc=$?

echo "realistic guest: kernel $(cat "$out/uname"), $(grep -c . "$out/kallsyms") kallsyms symbols"
grep -o 'balanced: [0-9]* iterations in [0-9.]* s' "$out/balanced.log" || true
grep -o 'Captured and wrote [0-9.]* MB[^]]*' "$out/balanced.log" || true
"$TOP/scripts/report-summary.sh" "$out/report.json"
python3 "$("$TOP/scripts/assemble-tree.sh")/tools/testing/kunit/kunit.py" parse "$out"/kunit/ref_trace.ktap 2>/dev/null |
	grep -E 'Testing complete|PASSED|FAILED' | tail -n 2 || true
echo "report --fail-on-leak: exit $rc"
exit $rc
