#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side check of the ref_trace events against the test_refleak driver
# (lib/test_refleak.c).  POSIX sh, busybox friendly, run as root with perf
# on PATH.
#
#  1. perf list must show ref_trace:ref_trace_final_put, _set and _anomaly;
#  2. perf record -a the three while "balanced 5" then "double_put 1" run in
#     the driver;
#  3. for each ref= address in /sys/kernel/debug/test_refleak/objects of
#     the balanced objects: exactly one ref_trace_set (count=1,
#     kind=refcount) and one ref_trace_final_put (kind=refcount), and for
#     the double_put object one final put and one ref_trace_anomaly
#     kind=refcount type=sub_uaf.  Events elsewhere in the system are
#     ignored: only the ref address decides;
#  4. kmem:kfree_rcu: one event per object of "rcu 5 kmalloc", at the
#     object's address, with a driver function as call_site;
#  5. "bench 1000": its totals in "status", and 1000 final puts on one
#     counter address;
#  6. ref_trace_ref, filtered on cache == "test_refleak_refs" while
#     "balanced 3" and "handoff 4" run: no event of another cache (the
#     filter works in the kernel), and per handoff object exactly a get
#     (old=1 delta=1, in test_refleak_hand_off) and a put (old=2
#     delta=-1), both kind=refcount: the final put is not a ref_trace_ref.
#
# Exit: 0 pass, 1 fail (reason printed), 2 skip (reason printed).

EVENT=ref_trace:ref_trace_final_put
EVENTS="-e ref_trace:ref_trace_set -e ref_trace:ref_trace_final_put -e ref_trace:ref_trace_anomaly"
N=5
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

perf list 2>/dev/null >"$TMP.list"
if ! grep -q "$EVENT" "$TMP.list"; then
	for t in /sys/kernel/tracing "$DBG/tracing"; do
		[ -d "$t/events/ref_trace/ref_trace_final_put" ] &&
			fail "$EVENT exists in $t but perf list does not show it"
	done
	skip "tracepoint $EVENT absent (CONFIG_REF_TRACE)"
fi
for e in ref_trace:ref_trace_set ref_trace:ref_trace_anomaly; do
	grep -q "$e" "$TMP.list" || fail "$EVENT exists but $e does not"
done

rm -f "$DATA"
# shellcheck disable=SC2086
perf record -q $EVENTS -a -o "$DATA" -- \
	sh -c "echo 'balanced $N' > $DIR/control && cat $DIR/objects > $TMP.objs &&
	       echo 'double_put 1' > $DIR/control" >"$TMP.rec" 2>&1 ||
	fail "perf record failed: $(cat "$TMP.rec")"
[ -s "$DATA" ] || fail "perf record wrote no data to $DATA"

# the ref= addresses of the objects of each command
DIR_OBJS=$DIR/objects
awk '$1 == "balanced" { for (i = 1; i <= NF; i++) if ($i ~ /^ref=/) print "balanced", substr($i, 5) }' \
	"$TMP.objs" >"$TMP.refs" || fail "cannot read the objects of balanced"
awk '$1 == "double_put" { for (i = 1; i <= NF; i++) if ($i ~ /^ref=/) print "double_put", substr($i, 5) }' \
	"$DIR_OBJS" >>"$TMP.refs" || fail "cannot read $DIR_OBJS"
nrefs=$(grep -c '^balanced' "$TMP.refs")
[ "$nrefs" -eq "$N" ] ||
	fail "the driver lists $nrefs balanced objects, expected $N"
grep -q '^double_put' "$TMP.refs" || fail "the driver lists no double_put object"

perf script --ns -i "$DATA" >"$TMP.all" 2>"$TMP.err" ||
	fail "perf script failed: $(cat "$TMP.err")"
# Every line is an event: with an unstable sched_clock, events of one CPU
# within a tick share a timestamp, so identical lines are not copies.
cp "$TMP.all" "$TMP.txt"
total=$(grep -c "ref_trace_" "$TMP.txt")

awk -v n="$N" '
function norm(v) {
	v = tolower(v)
	sub(/^0x/, "", v)
	sub(/^0+/, "", v)
	return v
}
function field(name,    i) {
	for (i = 1; i <= NF; i++)
		if (index($i, name "=") == 1)
			return substr($i, length(name) + 2)
	return ""
}
# Freed addresses are often reused by the next object: expect as many
# events for an address as the objects file lists it.
FNR == NR {
	r = norm($2)
	sc[r] = $1
	objs[r]++
	if ($1 == "double_put")
		double_puts[r]++
	next
}
/ref_trace_(set|final_put|anomaly):/ {
	r = norm(field("ref"))
	if (!(r in sc))
		next
	if ($0 ~ /ref_trace_set:/) {
		sets[r]++
		if (field("count") != "1" || field("kind") != "refcount") {
			printf "ref=0x%s: set with count=%s kind=%s\n", r, field("count"), field("kind")
			bad = 1
		}
	} else if ($0 ~ /ref_trace_final_put:/) {
		puts[r]++
		if (field("kind") != "refcount") {
			printf "ref=0x%s: final put kind=%s\n", r, field("kind")
			bad = 1
		}
		if (sc[r] == "balanced" && field("caller") !~ /^test_refleak_balanced/)
			printf "note: ref=0x%s: caller=%s\n", r, field("caller")
	} else {
		anomalies[r]++
		if (field("type") != "sub_uaf" || field("kind") != "refcount") {
			printf "ref=0x%s: anomaly kind=%s type=%s, expected refcount sub_uaf\n", r, field("kind"), field("type")
			bad = 1
		}
	}
}
END {
	for (r in sc) {
		# the double put may reuse the address of a balanced object
		want_anomaly = double_puts[r] + 0
		if (sets[r] != objs[r] || puts[r] != objs[r] || anomalies[r] != want_anomaly) {
			printf "ref=0x%s (%s): %d set, %d final put, %d anomaly; expected %d, %d, %d\n",
			       r, sc[r], sets[r], puts[r], anomalies[r], objs[r], objs[r], want_anomaly
			bad = 1
		}
		matched += puts[r]
	}
	if (matched != n + 1) {
		printf "%d final puts for the driver objects, expected %d\n", matched, n + 1
		bad = 1
	}
	exit bad
}' "$TMP.refs" "$TMP.txt" >"$TMP.out"
rc=$?
cat "$TMP.out"
[ "$rc" -eq 0 ] ||
	fail "the ref_trace events did not match the driver's objects ($total events recorded in all)"

# kmem:kfree_rcu: one event per object the driver's rcu scenario gives to
# kfree_rcu(), at the object's address, with the driver as call_site.
perf list 2>/dev/null | grep -q 'kmem:kfree_rcu' || fail "kmem:kfree_rcu absent (slab patch not applied?)"
perf record -q -e kmem:kfree_rcu -a -o "$DATA" -- \
	sh -c "echo 'rcu $N kmalloc' > $DIR/control" >"$TMP.rec" 2>&1 ||
	fail "perf record of kmem:kfree_rcu failed: $(cat "$TMP.rec")"
perf script -i "$DATA" >"$TMP.rcu" 2>"$TMP.err" || fail "perf script failed: $(cat "$TMP.err")"
awk '$1 == "rcu" { for (i = 1; i <= NF; i++) if ($i ~ /^obj=/) print tolower(substr($i, 7)) }' \
	"$DIR_OBJS" >"$TMP.robjs"
[ "$(grep -c . "$TMP.robjs")" -eq "$N" ] || fail "the driver lists no $N rcu objects"
awk '
function norm(v) { v = tolower(v); sub(/^0x/, "", v); sub(/^0+/, "", v); return v }
FNR == NR { v = $1; sub(/^0+/, "", v); want[v] = 0; next }
/kfree_rcu:/ {
	ptr = ""; site = ""
	for (i = 1; i <= NF; i++) {
		if (index($i, "ptr=") == 1) ptr = norm(substr($i, 5))
		if (index($i, "call_site=") == 1) site = substr($i, 11)
	}
	if (!(ptr in want))
		next
	want[ptr]++
	if (site !~ /^test_refleak/) {
		printf "object 0x%s: kfree_rcu call_site=%s, not in the driver\n", ptr, site
		bad = 1
	}
}
END {
	for (o in want)
		if (want[o] != 1) {
			printf "object 0x%s: %d kmem:kfree_rcu events, expected 1\n", o, want[o]
			bad = 1
		}
	exit bad
}' "$TMP.robjs" "$TMP.rcu" >"$TMP.out" || fail "kmem:kfree_rcu: $(cat "$TMP.out")"
# "bench": n life cycles of a refcount_t, each with one birth and one final
# put, timed; the totals are read from "status".
perf record -q -e ref_trace:ref_trace_set -e ref_trace:ref_trace_final_put -a -o "$DATA" -- \
	sh -c "echo 'bench 1000' > $DIR/control" >"$TMP.rec" 2>&1 ||
	fail "perf record around bench failed: $(cat "$TMP.rec")"
grep -q '^bench n=1000 cycles=[0-9]* ns=[1-9][0-9]*$' "$DIR/status" ||
	fail "bench: unexpected status: $(cat "$DIR/status")"
perf script -i "$DATA" -F event,trace >"$TMP.bench" 2>"$TMP.err" || fail "perf script failed: $(cat "$TMP.err")"
nb=$(awk '/ref_trace_final_put:/ { for (i = 1; i <= NF; i++) if (index($i, "ref=") == 1) n[$i]++ }
	END { m = 0; for (r in n) if (n[r] > m) m = n[r]; print m }' "$TMP.bench")
[ "$nb" -ge 1000 ] || fail "bench: $nb final puts on its counter, expected 1000"

# The same for a file_ref_t and an rcuref_t: each life cycle a birth and a
# final put of that kind, from the driver, and nothing else on the counter.
for type in file_ref rcuref; do
	perf record -q -e ref_trace:ref_trace_set -e ref_trace:ref_trace_final_put -a -o "$DATA" -- \
		sh -c "echo 'bench 1000 $type' > $DIR/control" >"$TMP.rec" 2>&1 ||
		fail "perf record around bench $type failed: $(cat "$TMP.rec")"
	grep -q '^bench n=1000 ' "$DIR/status" || fail "bench $type: unexpected status: $(cat "$DIR/status")"
	perf script -i "$DATA" -F event,trace >"$TMP.bench" 2>"$TMP.err" ||
		fail "perf script failed: $(cat "$TMP.err")"
	# the births come from the driver (the init is inlined there), the
	# final puts from the type's out-of-line slow path: the same counter
	counts=$(awk -v kind="kind=$type" '
		/ref_trace_(set|final_put):/ {
			ref = ""; k = ""
			for (i = 1; i <= NF; i++) {
				if (index($i, "ref=") == 1) ref = $i
				if (index($i, "kind=") == 1) k = $i
			}
			if ($0 ~ /ref_trace_set:/ && $0 ~ /caller=test_refleak_/) {
				set[ref]++
				if (k != kind) bad = k
			} else if ($0 ~ /ref_trace_final_put:/) {
				put[ref]++
				putk[ref] = k
			}
		}
		END { m = 0
			for (r in set) if (set[r] > m) { m = set[r]; best = r }
			if (bad != "") { print "births of " bad; exit }
			if (m && putk[best] != kind) { print "final puts of " putk[best]; exit }
			print m, put[best] + 0 }' "$TMP.bench")
	[ "$counts" = "1000 1000" ] ||
		fail "bench $type: births and final puts of its counter: $counts, expected 1000 1000"
done

# ref_trace_ref, filtered on the cache of the hand-off scenario
grep -q 'ref_trace:ref_trace_ref' "$TMP.list" || fail "ref_trace:ref_trace_ref absent (series without the get/put patch?)"
perf record -q -e ref_trace:ref_trace_ref --filter 'cache == "test_refleak_refs"' -a -o "$DATA" -- \
	sh -c "echo 'balanced 3' > $DIR/control && echo 'handoff $N' > $DIR/control" >"$TMP.rec" 2>&1 ||
	fail "perf record of ref_trace_ref failed: $(cat "$TMP.rec")"
perf script -i "$DATA" -F event,trace >"$TMP.gp" 2>"$TMP.err" || fail "perf script failed: $(cat "$TMP.err")"
awk '$1 == "handoff" { for (i = 1; i <= NF; i++) if ($i ~ /^ref=/) print tolower(substr($i, 7)) }' \
	"$DIR_OBJS" >"$TMP.hrefs"
[ "$(grep -c . "$TMP.hrefs")" -eq "$N" ] || fail "the driver lists no $N handoff objects"
awk '
function norm(v) { v = tolower(v); sub(/^0x/, "", v); sub(/^0+/, "", v); return v }
function field(name,    i) {
	for (i = 1; i <= NF; i++)
		if (index($i, name "=") == 1)
			return substr($i, length(name) + 2)
	return ""
}
FNR == NR { v = $1; sub(/^0+/, "", v); want[v] = 1; next }
/ref_trace_ref:/ {
	all++
	if (field("cache") != "test_refleak_refs") {
		printf "event of cache \"%s\" passed the filter\n", field("cache")
		bad = 1
	}
	r = norm(field("ref"))
	if (!(r in want))
		next
	ev[r] = ev[r] " " field("old") "/" field("delta")
	if (field("kind") != "refcount") {
		printf "ref=0x%s: ref_trace_ref kind=%s, expected refcount\n", r, field("kind")
		bad = 1
	}
	# -Os keeps an out-of-line refcount_inc() in the driver: caller is in the copy
	if (field("delta") == "1" && field("caller") !~ /^(test_refleak_hand_off|refcount_inc)/) {
		printf "ref=0x%s: get from %s, expected test_refleak_hand_off\n", r, field("caller")
		bad = 1
	}
}
END {
	for (r in want)
		if (ev[r] != " 1/1 2/-1") {
			printf "ref=0x%s: old/delta%s, expected 1/1 2/-1\n", r, ev[r]
			bad = 1
		}
	if (!all) {
		print "no ref_trace_ref event"
		bad = 1
	}
	exit bad
}' "$TMP.hrefs" "$TMP.gp" >"$TMP.out" || fail "ref_trace_ref: $(cat "$TMP.out")"
ngp=$(grep -c 'ref_trace_ref:' "$TMP.gp")
pass "$N balanced objects: one set and one final put each; double_put: final put + refcount sub_uaf anomaly ($total events in all); $N kfree_rcu objects: one kmem:kfree_rcu each from the driver; bench: 1000 final puts on its counter, 1000 births and final puts of a file_ref_t and of an rcuref_t; ref_trace_ref: $ngp events, all of test_refleak_refs, a refcount get and put per handoff object"
