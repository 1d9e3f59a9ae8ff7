#!/usr/bin/env bash
# make kasan: the small guest kernel with KASAN (KERNEL_FLAVOR=kasan:
# THREAD_SIZE 32 KiB on x86_64), booted with guest/kasan.sh: record -b's
# shell test must pass (the same findings as the plain recording), the
# programs must know stacks by their return addresses on the larger task
# stacks, and KASAN must report nothing.  Not part of 'make check': a
# second kernel build (about 20 minutes cold) and a slower guest.
. "$(dirname "$0")/lib.sh"
out=$BUILD/kasan
KERNEL_FLAVOR=kasan "$TOP/scripts/build-kernel.sh" >&2
"$TOP/scripts/build-perf.sh" >&2
"$TOP/scripts/make-initramfs.sh" >&2
BZIMAGE=$BUILD/bzImage-kasan GUEST_MEM=${GUEST_MEM:-4G} GUEST_TIMEOUT=${GUEST_TIMEOUT:-2400} \
	"$TOP/scripts/run-guest.sh" "$TOP/guest/kasan.sh" "$out" "$TOP/guest/lib.sh" >&2 ||
	die "the KASAN guest failed (see $out/console.log)"
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
echo "KASAN guest: kernel $(cat "$out/uname")"
if [ "$(cat "$out/perf-test-refleak-bpf.rc")" = 0 ]; then
	pass "perf test 'perf refleak record -b': $(grep -c '^\[PASS\]' "$out/perf-test-refleak-bpf.log") checks passed"
else
	fail "perf test 'perf refleak record -b':"
	grep '^\[FAIL\]\|^\[Skip\]' "$out/perf-test-refleak-bpf.log" | head -n 20
fi
known=$(sed -n 's/^perf refleak: stacks unwound: \([0-9]*\); known by their return addresses: \([0-9]*\)$/\1 \2/p' \
	"$out/record-v.log")
if [ -n "$known" ] && [ "${known#* }" -gt 0 ]; then
	pass "record -b -v: stacks unwound ${known% *}, known by their return addresses ${known#* }"
else
	fail "record -b -v: no stack known by its return addresses (${known:-no -v line})"
fi
if grep -q 'leak_ref' "$out/report-v.log"; then
	pass "record -b -v: the driver's leak is reported"
else
	fail "record -b -v: the driver's leak is not reported"
	head -n 20 "$out/report-v.log"
fi
n=$(cat "$out/kasan-reports")
if [ "$n" = 0 ]; then
	pass "KASAN: no report"
else
	fail "KASAN: $n reports (see $out/console.log)"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
