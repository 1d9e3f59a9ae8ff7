#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side check of the ref_trace:ref_trace_final_put tracepoint against
# the test_refleak driver (lib/test_refleak.c).  POSIX sh, busybox friendly,
# run as root with perf on PATH.
#
#  1. perf list must show ref_trace:ref_trace_final_put;
#  2. perf record -a the tracepoint while "balanced 5" runs in the driver;
#  3. among the recorded events, those whose obj is one of the ref= addresses
#     in /sys/kernel/debug/test_refleak/objects must be exactly one per
#     object (5 in all), each with fn=refcount_dec_and_test.  Final puts
#     elsewhere in the system are ignored: only obj decides.
#
# Exit: 0 pass, 1 fail (reason printed), 2 skip (reason printed).

EVENT=ref_trace:ref_trace_final_put
N=5
FN=refcount_dec_and_test
DBG=/sys/kernel/debug
DIR=$DBG/test_refleak
TMP=${TMPDIR:-/tmp}/tracepoint-check.$$
DATA=/tmp/tp.data

pass() { echo "PASS: $*"; rm -f "$TMP".*; exit 0; }
fail() { echo "FAIL: $*"; rm -f "$TMP".*; exit 1; }
skip() { echo "SKIP: $*"; rm -f "$TMP".*; exit 2; }

[ "$(id -u)" = 0 ] || skip "must run as root"
command -v perf >/dev/null 2>&1 || skip "perf not found on PATH"

if [ ! -d "$DIR" ] && [ ! -d "$DBG/tracing" ]; then
	mount -t debugfs debugfs "$DBG" 2>/dev/null
fi
[ -e "$DIR/control" ] ||
	skip "test_refleak driver absent ($DIR/control missing, CONFIG_TEST_REFLEAK)"

if ! perf list 2>/dev/null | grep -q "$EVENT"; then
	for t in /sys/kernel/tracing "$DBG/tracing"; do
		[ -d "$t/events/ref_trace/ref_trace_final_put" ] &&
			fail "$EVENT exists in $t but perf list does not show it"
	done
	skip "tracepoint $EVENT absent (CONFIG_REF_TRACE)"
fi

rm -f "$DATA"
perf record -q -e "$EVENT" -a -o "$DATA" -- \
	sh -c "echo 'balanced $N' > $DIR/control" >"$TMP.rec" 2>&1 ||
	fail "perf record failed: $(cat "$TMP.rec")"
[ -s "$DATA" ] || fail "perf record wrote no data to $DATA"

# the ref= addresses of the objects of the last command
awk '$1 == "balanced" {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^ref=/)
			print substr($i, 5)
}' "$DIR/objects" >"$TMP.refs" || fail "cannot read $DIR/objects"
nrefs=$(grep -c . "$TMP.refs")
[ "$nrefs" -eq "$N" ] ||
	fail "$DIR/objects lists $nrefs balanced objects, expected $N"

perf script -i "$DATA" >"$TMP.txt" 2>"$TMP.err" ||
	fail "perf script failed: $(cat "$TMP.err")"
total=$(grep -c "ref_trace_final_put" "$TMP.txt")

awk -v n="$N" -v fn_want="$FN" '
function norm(v) {
	v = tolower(v)
	sub(/^0x/, "", v)
	sub(/^0+/, "", v)
	return v
}
# Freed addresses are often reused by the next object: expect as many
# events for an address as the objects file lists it.
FNR == NR {
	expect[norm($1)]++
	want[norm($1)] = 0
	next
}
/ref_trace_final_put/ {
	obj = ""
	fn = ""
	caller = ""
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^obj=/)
			obj = norm(substr($i, 5))
		else if ($i ~ /^fn=/)
			fn = substr($i, 4)
		else if ($i ~ /^caller=/)
			caller = substr($i, 8)
	}
	if (!(obj in want))
		next
	want[obj]++
	matched++
	if (fn != fn_want) {
		printf "obj=0x%s: fn=%s, expected %s\n", obj, fn, fn_want
		bad = 1
	}
	if (caller !~ /^test_refleak_balanced/)
		printf "note: obj=0x%s: caller=%s\n", obj, caller
}
END {
	for (o in want)
		if (want[o] != expect[o]) {
			printf "obj=0x%s: %d events, expected %d\n", o, want[o], expect[o]
			bad = 1
		}
	if (matched != n) {
		printf "%d events for the driver objects, expected %d\n", matched, n
		bad = 1
	}
	exit bad
}' "$TMP.refs" "$TMP.txt" >"$TMP.out"
rc=$?
cat "$TMP.out"
[ "$rc" -eq 0 ] ||
	fail "$EVENT did not report the $N balanced objects ($total events recorded in all)"
pass "$N final puts with fn=$FN for the $N objects ($total events recorded in all)"
