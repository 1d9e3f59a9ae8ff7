#!/bin/sh
# perf refleak end-to-end (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# Drives the kernel test driver lib/test_refleak.c (CONFIG_TEST_REFLEAK,
# /sys/kernel/debug/test_refleak) under 'perf refleak record', then checks
# that 'perf refleak report' puts exactly the driver's objects (matched by
# address with the driver's "objects" file) in the class their scenario
# implies, under the site test_refleak_<scenario>, and no driver object in
# any other class.  Balanced, percpu and rcu objects must not be listed.
# With 'record --refs' on the driver's error-path and hand-off scenarios,
# the report must name the get the error path never put, and no other.
#
# POSIX sh and busybox tools only (runs in a minimal guest); no jq, no
# python: the --json output is flattened with sed+awk below.
#
# Exit: 0 pass, 1 fail, 2 skip (reason printed).
# Environment: REFLEAK_RCU_WAIT (seconds to wait for kfree_rcu frees inside
# the recorded command, default 6), REFLEAK_KEEP=1 keeps the temp directory,
# REFLEAK_DRIVER_DIR overrides /sys/kernel/debug/test_refleak (for testing
# this script against a simulated driver).

# shellcheck source=lib/refleak_refs.sh
. "$(dirname "$0")"/lib/refleak_refs.sh

err=0
verbose=0
[ "$1" = "-v" ] && verbose=1

drv=${REFLEAK_DRIVER_DIR:-/sys/kernel/debug/test_refleak}
rcu_wait=${REFLEAK_RCU_WAIT:-6}
tmpdir=
reclaim_needed=0

pass() { echo "[PASS] $*"; }
fail() { echo "[FAIL] $*"; err=1; }
skip() { echo "[Skip] $*"; exit 2; }
note() { echo "[Note] $*"; }

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	if [ "$reclaim_needed" = 1 ] && [ -w "$drv/control" ]; then
		echo reclaim > "$drv/control" 2>/dev/null
	fi
	if [ -n "$tmpdir" ] && [ -d "$tmpdir" ]; then
		if [ "${REFLEAK_KEEP:-0}" = 1 ]; then
			echo "Temporary files kept in $tmpdir"
		else
			rm -rf "$tmpdir"
		fi
	fi
	trap - EXIT INT TERM
}
# shellcheck disable=SC2154 # st is set inside the trap
trap 'st=$?; cleanup; exit $st' EXIT
trap 'err=1; echo "Interrupted"; exit 1' INT TERM

# Show the first lines of a file (for failure diagnostics).
show() {
	echo "---- $1 (first ${2:-40} lines) ----"
	head -n "${2:-40}" "$1"
	echo "----"
}

# ---------------------------------------------------------------- prerequisites

if [ "$(id -u)" != 0 ]; then
	skip "No root permission"
fi
if ! command -v perf > /dev/null 2>&1; then
	skip "No perf binary in PATH"
fi

if [ ! -d /sys/kernel/debug/tracing ] && [ ! -d /sys/kernel/debug/test_refleak ]; then
	mount -t debugfs none /sys/kernel/debug > /dev/null 2>&1
fi
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing > /dev/null 2>&1
fi

have_tp=0
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	if [ -d "$d/events/ref_trace/ref_trace_final_put" ]; then
		have_tp=1
	fi
done
if [ "$have_tp" = 0 ] &&
   perf list tracepoint 2>/dev/null | grep -q 'ref_trace:ref_trace_final_put'; then
	have_tp=1
fi
if [ "$have_tp" = 0 ]; then
	skip "No tracepoint ref_trace:ref_trace_final_put (CONFIG_REF_TRACE)"
fi
if [ ! -w "$drv/control" ] || [ ! -r "$drv/objects" ]; then
	skip "No test driver $drv (CONFIG_TEST_REFLEAK)"
fi

tmpdir=$(mktemp -d /tmp/__perf_test_refleak.XXXXXX) || {
	echo "[FAIL] cannot create a temporary directory"
	exit 1
}
data=$tmpdir/perf.data
objs=$tmpdir/objects
drive=$tmpdir/drive.sh

# ---------------------------------------------------------------- helpers

# json_flatten FILE: one "path<TAB>value" line per scalar of a JSON document.
# Path elements are object keys and array indexes joined with '.', e.g.
#   findings.3.objects.2.addr	0xffff888003a1b040
# String values lose their quotes (escapes are left as they are).
# sed puts one token per line (a string token is matched whole, so brackets,
# commas and colons inside strings are safe), awk tracks the nesting.
json_flatten() {
	sed -E 's/("([^"\\]|\\.)*"|[][{}:,]|[^][{}:,"[:space:]]+)/\1\
/g' "$1" | sed -e 's/^[[:space:]]*//' -e '/^$/d' | awk '
	$0 == "{" { d++; ty[d] = "o"; k[d] = ""; wk[d] = 1; next }
	$0 == "[" { d++; ty[d] = "a"; ix[d] = 0; next }
	$0 == "}" || $0 == "]" { d--; next }
	$0 == "," { if (ty[d] == "a") ix[d]++; else wk[d] = 1; next }
	$0 == ":" { wk[d] = 0; next }
	{
		t = $0
		if (substr(t, 1, 1) == "\"") {
			t = substr(t, 2, length(t) - 2)
			if (ty[d] == "o" && wk[d]) { k[d] = t; next }
		}
		p = ""
		for (i = 1; i <= d; i++)
			p = p (i > 1 ? "." : "") (ty[i] == "o" ? k[i] : ix[i])
		print p "\t" t
	}'
}

# jget FLAT PATH: value of one scalar, empty if absent.
jget() {
	awk -F '\t' -v p="$2" '$1 == p { print $2; exit }' "$1"
}

# json_objects FLAT: one line per listed object:
#   class scenario addr inferred uncertain age_ms site
# scenario is the name behind test_refleak_ in the site symbol, "-" for
# sites outside the driver; addr is lower case hex without 0x and leading 0.
json_objects() {
	awk -F '\t' '
	function norm(a) { a = tolower(a); sub(/^0x/, "", a); sub(/^0+/, "", a); return a }
	$1 ~ /^findings\./ {
		n = split($1, P, ".")
		g = P[2]
		if (n == 3 && P[3] == "class") cls[g] = $2
		if (n == 3 && P[3] == "site") site[g] = $2
		if (n == 5 && P[3] == "objects") {
			o = g SUBSEP P[4]
			obj[o] = 1
			if (P[5] == "addr") addr[o] = norm($2)
			else if (P[5] == "inferred") inf[o] = $2
			else if (P[5] == "uncertain") unc[o] = $2
			else if (P[5] == "age_ms") age[o] = $2
		}
	}
	END {
		for (o in obj) {
			split(o, K, SUBSEP)
			g = K[1]
			s = site[g]; sym = s
			sub(/\+.*/, "", sym); sub(/\..*/, "", sym)
			scen = "-"
			if (sym ~ /^test_refleak_/) scen = substr(sym, 14)
			if (s == "") s = "?"
			print cls[g], scen, addr[o], (inf[o] == "" ? "?" : inf[o]), \
			      (unc[o] == "" ? "?" : unc[o]), (age[o] == "" ? "?" : age[o]), s
		}
	}' "$1" | sort
}

# json_groups FLAT: one line per site group of a driver scenario:
#   class scenario count n_objects ref_offset alloc_has_scen n_put n_free cache
json_groups() {
	awk -F '\t' '
	$1 ~ /^findings\./ {
		n = split($1, P, ".")
		g = P[2]
		grp[g] = 1
		if (n == 3) f[g, P[3]] = $2
		if (n == 5 && P[3] == "objects" && P[5] == "addr") nobj[g]++
		if (n == 7 && P[3] == "stacks" && P[6] == "frames") {
			fr[g, P[4]] = fr[g, P[4]] " " $2
			nfr[g, P[4]]++
		}
	}
	END {
		for (g in grp) {
			sym = f[g, "site"]
			sub(/\+.*/, "", sym); sub(/\..*/, "", sym)
			if (sym !~ /^test_refleak_/) continue
			scen = substr(sym, 14)
			has = (fr[g, "alloc"] ~ ("[ ]test_refleak_" scen "([+.]|$| )")) ? 1 : 0
			print f[g, "class"], scen, f[g, "count"] + 0, nobj[g] + 0, \
			      (f[g, "ref_offset"] == "" ? "?" : f[g, "ref_offset"]), \
			      has, nfr[g, "put"] + 0, nfr[g, "free"] + 0, \
			      (f[g, "cache"] == "" ? "?" : f[g, "cache"])
		}
	}' "$1" | sort
}

# The class each suspicious scenario's objects must be listed in, one
# "scenario:class" word each; the objects of any other scenario (balanced,
# percpu, rcu) must not be listed at all.  A new scenario is one word here
# (plus its line in $scenarios below); every check reads this table.
scenario_classes="leak_ref:likely_leak leak_all:likely_leak
	free_no_put:freed_without_final_put put_no_free:final_put_not_freed
	put_after_free:put_after_free double_put:double_put"
# The suspicious scenarios, and an awk condition that is true for them on
# field $1 (suspicious_on 2: on field $2).
suspicious=$(for sc in $scenario_classes; do printf '%s ' "${sc%%:*}"; done)
suspicious_on() {
	for s in $suspicious; do printf '%s$%s == "%s"' "${or:-}" "$1" "$s"; or=' || '; done
	or=
}

# Class a scenario's objects must be listed in ("none": never listed).
expected_class() {
	for sc in $scenario_classes; do
		[ "${sc%%:*}" = "$1" ] && { echo "${sc#*:}"; return; }
	done
	echo none
}

# check_classes LISTED EXPECTED LABEL [AGEFILTER]
# LISTED: output of json_objects.  EXPECTED: the driver's objects lines
# ("<scenario> <alloc> obj=0x.. ref=0x.. size=N").  Every driver object of a
# scenario with an expected class must be listed there exactly as many times
# as the driver made it (addresses may be reused), under its own scenario's
# site; no object of a driver site may be listed in another class; objects
# of scenarios whose class is "none" must not be listed at all.
# With AGEFILTER=aged (a --min-age larger than the recording),
# final_put_not_freed must list no driver object (--min-age filters only
# that class).
# When the recording lost events ($lost != 0), an object the report marks
# uncertain may be in another class: that is noted, not failed.  Missing
# objects always fail.
check_classes() {
	awk -v label="$3" -v agefilter="${4:-}" -v lost="${lost:-0}" -v map="$scenario_classes" '
	BEGIN {
		n = split(map, M, " ")
		for (i = 1; i <= n; i++) {
			split(M[i], SC, ":")
			class_of[SC[1]] = SC[2]
		}
	}
	function norm(a) { a = tolower(a); sub(/^0x/, "", a); sub(/^0+/, "", a); return a }
	function want(s) { return (s in class_of) ? class_of[s] : "none" }
	function agecls(c) { return c == "final_put_not_freed" }
	# --min-age longer than the recording: no final put is old enough, and
	# no process exited long enough ago for a leak to be likely
	function aged(w) { return agecls(w) ? "none" : w == "likely_leak" ? "outstanding" : w }
	FNR == NR {
		# the driver objects file
		a = ""
		for (i = 3; i <= NF; i++) {
			if ($i ~ /^obj=/) a = norm(substr($i, 5))
			if ($i ~ /^ref=/) refaddr[norm(substr($i, 5))] = 1
		}
		if (a == "") next
		want_n[$1, a]++
		anyaddr[a] = anyaddr[a] " " $1
		scen[$1] = 1
		next
	}
	{
		# class scenario addr inferred uncertain age site
		c = $1; s = $2; a = $3
		if (s == "-") {
			if (a in anyaddr)
				foreign[a] = foreign[a] " " c "@" $7
			next
		}
		w = want(s)
		if (agefilter == "aged") w = aged(w)
		if (lost != 0 && $5 == "true" && c != w) {
			printf "[Note] %s: %s object 0x%s in %s is uncertain (%s lost events)\n",
			       label, s, a, c, lost
			next
		}
		if (!(s in scen)) {
			printf "[FAIL] %s: %s object 0x%s in %s, the driver made no %s objects\n",
			       label, s, a, c, s
			bad++
			next
		}
		if (w == "none") {
			printf "[FAIL] %s: %s object 0x%s listed in %s; it must not be\n",
			       label, s, a, c
			bad++
			next
		}
		if (c != w) {
			printf "[FAIL] %s: %s object 0x%s listed in %s, expected %s\n",
			       label, s, a, c, w
			bad++
			next
		}
		if (!((s, a) in want_n)) {
			if ($4 == "true") {
				printf "[Note] %s: inferred %s object 0x%s (pre-existing) in %s\n",
				       label, s, a, c
				next
			}
			printf "[FAIL] %s: %s object 0x%s in %s is not a driver object%s\n",
			       label, s, a, c, \
				(a in refaddr) ? " (a refcount address, not the start)" : ""
			bad++
			next
		}
		got[s, a]++
	}
	END {
		for (k in want_n) {
			split(k, K, SUBSEP)
			s = K[1]; a = K[2]
			w = want(s)
			if (agefilter == "aged") w = aged(w)
			if (w == "none") continue
			if (got[k] + 0 != want_n[k]) {
				printf "[FAIL] %s: %s object 0x%s listed %d times in %s, not %d",
				       label, s, a, got[k], w, want_n[k]
				if (a in foreign) printf " (seen under other sites:%s)", foreign[a]
				printf "\n"
				bad++
			} else
				ok[s] += got[k]
		}
		for (s in scen) {
			w = want(s)
			if (agefilter == "aged") w = aged(w)
			if (w == "none")
				printf "[info] %s: %s objects: none listed, as expected\n", label, s
			else
				printf "[info] %s: %s objects: %d in %s\n", label, s, ok[s], w
		}
		exit bad ? 1 : 0
	}' "$2" "$1"
}

# run_report NAME ARGS...: perf refleak report with stdout/stderr to files,
# exit status in $rc.
run_report() {
	name=$1
	shift
	perf refleak report "$@" > "$tmpdir/$name.out" 2> "$tmpdir/$name.err"
	rc=$?
}

# The status of a successful report: 0 (lost events are reported on
# stderr and in the header; only --fail-on-leak turns them into 4).
ok_status() {
	[ "$1" = 0 ]
}

# report_json NAME ARGS...: run_report with --all --json (every finding,
# possible ones too), then the flattened document in NAME.flat and its
# objects (json_objects) in NAME.objs.
report_json() {
	run_report "$@" --all --json
	json_flatten "$tmpdir/$1.out" > "$tmpdir/$1.flat"
	json_objects "$tmpdir/$1.flat" > "$tmpdir/$1.objs"
}

# expect_classes NAME DRIVER_OBJECTS LABEL MESSAGE [AGEFILTER]: passes with
# MESSAGE when check_classes accepts the objects of report_json NAME.
expect_classes() {
	if check_classes "$tmpdir/$1.objs" "$2" "$3" "${5:-}"; then
		pass "$4"
	else
		err=1
		show "$tmpdir/$1.objs" 60
		show "$2" 60
	fi
}

# expect_report_classes: expect_classes, after checking the exit status of
# the report just run.
expect_report_classes() {
	if ok_status "$rc"; then
		expect_classes "$@"
	else
		fail "$3: report exited $rc"
		show "$tmpdir/$1.err" 10
	fi
}

# expect_grep NAME PATTERN MESSAGE ARGS...: perf refleak report ARGS exits
# with a good status and its output matches PATTERN.
expect_grep() {
	name=$1 pat=$2 msg=$3
	shift 3
	run_report "$name" "$@"
	if ok_status "$rc" && grep -q "$pat" "$tmpdir/$name.out"; then
		pass "$msg"
	else
		fail "$msg: exit $rc, no '$pat' in the output"
		show "$tmpdir/$name.err" 10
	fi
}

# expect_exit NAME STATUS STREAM MESSAGE ARGS...: perf refleak report ARGS
# exits STATUS and writes something to STREAM (out or err).
expect_exit() {
	name=$1 want=$2 stream=$3 msg=$4
	shift 4
	run_report "$name" "$@"
	if [ "$rc" = "$want" ] && [ -s "$tmpdir/$name.$stream" ]; then
		pass "$msg exits $want"
	else
		fail "$msg exited $rc, expected $want with output on std$stream"
		show "$tmpdir/$name.err" 10
	fi
}

# ---------------------------------------------------------------- record

# The recorded command: create every scenario, collect the driver's objects
# file after each command, then wait for the kfree_rcu() frees.
cat > "$drive" << 'EOF'
drv=$1
objs=$2
wait=$3
shift 3
while [ $# -ge 3 ]; do
	if ! echo "$1 $2 $3" > "$drv/control"; then
		echo "drive: writing '$1 $2 $3' to $drv/control failed" >&2
		exit 1
	fi
	cat "$drv/objects" >> "$objs" || exit 1
	echo "$1 $2 $3" >> "$objs.cmds"
	shift 3
done
sleep "$wait"
echo done > "$objs.done"
EOF

# Scenario, count, allocator.  The cache variants of leak_ref and free_no_put
# are recognised through the other objects of the same slab cache (a final
# put seen in test_refleak_obj teaches its refcount offset); a kmalloc site
# whose objects never reach a final put cannot be told from any other
# kmalloc site, so those variants are not driven.  put_after_free needs the
# driver's SLAB_TYPESAFE_BY_RCU cache (test_refleak_typesafe): it refuses kmalloc.
scenarios="balanced 7 cache
balanced 3 kmalloc
leak_ref 3 cache
leak_all 3 cache
put_no_free 5 cache
put_no_free 2 kmalloc
free_no_put 4 cache
percpu 2 cache
rcu 6 cache
rcu 2 kmalloc
put_after_free 3 cache
double_put 2 cache
double_put 2 kmalloc"

# Start from a clean driver: free whatever an earlier run kept.
echo reclaim > "$drv/control" 2>/dev/null
reclaim_needed=1

echo "Recording the driver scenarios (waiting ${rcu_wait}s for RCU frees)"
# shellcheck disable=SC2086 # the scenario list is split on purpose
perf refleak record -o "$data" -- sh "$drive" "$drv" "$objs" "$rcu_wait" $scenarios \
	> "$tmpdir/record.out" 2> "$tmpdir/record.err"
rc=$?
if [ "$rc" != 0 ] || [ ! -s "$data" ]; then
	fail "perf refleak record exited $rc or wrote no data"
	show "$tmpdir/record.err"
	exit 1
fi
if [ ! -f "$objs.done" ]; then
	fail "the recorded command did not complete (driver rejected a command?)"
	show "$tmpdir/record.err"
	exit 1
fi
pass "perf refleak record"

# The driver must have made what was asked.
drv_ok=1
echo "$scenarios" | while read -r s n a; do
	got=$(awk -v s="$s" -v a="$a" '$1 == s && $2 == a' "$objs" | wc -l)
	if [ "$got" != "$n" ]; then
		echo "[FAIL] driver objects file: $got '$s $a' objects, expected $n"
		exit 1
	fi
done || drv_ok=0
if [ "$drv_ok" = 1 ]; then
	pass "driver made every object that was asked for ($(wc -l < "$objs") objects)"
else
	err=1
	show "$objs"
	exit 1
fi

# Expected refcount offset per scenario/allocator (low 32 bits suffice).
offsets=$tmpdir/offsets
awk '
function hex(h,   i, v) {
	h = tolower(h); sub(/^0x/, "", h)
	if (length(h) > 8) h = substr(h, length(h) - 7)
	v = 0
	for (i = 1; i <= length(h); i++)
		v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return v
}
{
	o = ""; r = ""
	for (i = 3; i <= NF; i++) {
		if ($i ~ /^obj=/) o = substr($i, 5)
		if ($i ~ /^ref=/) r = substr($i, 5)
	}
	off = (hex(r) - hex(o) + 4294967296) % 4294967296
	k = $1 " " $2
	if (!(k in seen)) { seen[k] = off; print $1, $2, off }
	else if (seen[k] != off) print "inconsistent", k > "/dev/stderr"
}' "$objs" > "$offsets"

# ---------------------------------------------------------------- JSON report

echo "Checking perf refleak report --json --min-age 0"
report_json json -i "$data" --min-age 0
lost=$(jget "$tmpdir/json.flat" summary.lost_events)
if [ -z "$lost" ] || [ "$(jget "$tmpdir/json.flat" version)" != 2 ]; then
	fail "report --json: no JSON document with version 2 and summary.lost_events (exit $rc)"
	show "$tmpdir/json.err"
	show "$tmpdir/json.out" 20
	exit 1
fi
if [ "$lost" != 0 ]; then
	note "the recording lost $lost events: verdicts may be uncertain, exit status 2 expected"
fi
if ok_status "$rc"; then
	pass "report --json exit status $rc (lost events: $lost)"
else
	fail "report --json exited $rc (lost events: $lost), expected 0 (2 only with lost events)"
	show "$tmpdir/json.err"
fi

for ev in kmalloc kmem_cache_alloc kfree kmem_cache_free final_put; do
	v=$(jget "$tmpdir/json.flat" "summary.events.$ev")
	if [ -n "$v" ] && [ "$v" -gt 0 ] 2>/dev/null; then
		pass "summary.events.$ev = $v"
	else
		fail "summary.events.$ev = '$v', expected > 0"
	fi
done

expect_classes json "$objs" json "every driver object is in its class, and only there"

# The objects of the other scenarios (balanced, percpu, rcu) are counted as
# balanced.
nbal=$(awk "!($(suspicious_on 1))" "$objs" | wc -l)
v=$(jget "$tmpdir/json.flat" summary.classes.balanced)
if [ -n "$v" ] && [ "$v" -ge "$nbal" ] 2>/dev/null; then
	pass "summary.classes.balanced = $v (>= $nbal driver objects)"
elif [ "$lost" != 0 ]; then
	note "summary.classes.balanced = '$v' < $nbal, with $lost lost events"
else
	fail "summary.classes.balanced = '$v', expected >= $nbal (balanced+percpu+rcu)"
fi

# Per site: count, offset, stacks, one group per scenario and class.
json_groups "$tmpdir/json.flat" > "$tmpdir/json.groups"
for s in $suspicious; do
	c=$(expected_class "$s")
	n=$(awk -v s="$s" '$1 == s' "$objs" | wc -l)
	lines=$(awk -v c="$c" -v s="$s" '$1 == c && $2 == s' "$tmpdir/json.groups")
	if [ -z "$lines" ]; then
		fail "no $c site test_refleak_$s"
		continue
	fi
	total=$(echo "$lines" | awk '{ t += $3 } END { print t + 0 }')
	if [ "$total" = "$n" ]; then
		pass "$c site test_refleak_$s: count $total"
	else
		fail "$c site test_refleak_$s: count $total, expected $n"
	fi
	echo "$lines" | while read -r _c _s count nobj off has nput nfree cache; do
		[ "$count" = "$nobj" ] || {
			echo "[FAIL] $c test_refleak_$s ($cache): count $count, $nobj objects"
			exit 1
		}
		[ "$has" = 1 ] || {
			echo "[FAIL] $c test_refleak_$s ($cache): not in its alloc stacks"
			exit 1
		}
		case $c in
		final_put_not_freed)
			[ "$nput" -gt 0 ] ||
				{ echo "[FAIL] $c test_refleak_$s: no put stack"; exit 1; } ;;
		freed_without_final_put)
			[ "$nfree" -gt 0 ] ||
				{ echo "[FAIL] $c test_refleak_$s: no free stack"; exit 1; } ;;
		esac
		# any allocator of this scenario has the same offset in the driver
		want=$(awk -v s="$s" '$1 == s && !seen[$3]++ { printf "%s%s", sep, $3; sep = ","}' \
			"$offsets")
		case ",$want," in
		*",$off,"*) ;;
		*) false ;;
		esac || {
			echo "[FAIL] $c test_refleak_$s ($cache): ref_offset $off, not $want"
			exit 1
		}
		echo "[PASS] $c test_refleak_$s ($cache): objects, alloc stack, ref_offset $off"
	done || err=1
done

# Ages, inferred/uncertain flags of the driver's listed objects.
awk "$(suspicious_on 2)" "$tmpdir/json.objs" \
	> "$tmpdir/json.drvobjs"
if awk '$2 == "leak_ref" && !($6 + 0 >= 1000) { bad = 1 } END { exit bad }' \
	"$tmpdir/json.drvobjs"; then
	pass "likely_leak driver objects are at least 1000 ms old"
else
	fail "a leak_ref object has age_ms < 1000 (it lived ${rcu_wait}s until the end)"
fi
if awk '$4 != "false" { bad = 1 } END { exit bad }' "$tmpdir/json.drvobjs"; then
	pass "no driver object is marked inferred"
else
	fail "a driver object allocated in the recording is inferred (or the field is missing)"
fi
if [ "$lost" = 0 ]; then
	if awk '$5 != "false" { bad = 1 } END { exit bad }' "$tmpdir/json.drvobjs"; then
		pass "no driver object is marked uncertain (no lost events)"
	else
		fail "a driver object is marked uncertain although no event was lost"
	fi
fi

# ---------------------------------------------------------------- min-age

echo "Checking --min-age"
report_json aged -i "$data" --min-age 3600000
expect_report_classes aged "$objs" "min-age 3600000" \
	"--min-age 3600000 hides final_put_not_freed, likely leaks become outstanding" aged
report_json aged1 -i "$data" --min-age 1000
expect_report_classes aged1 "$objs" "min-age 1000" \
	"--min-age 1000 keeps every driver object (final puts ${rcu_wait}s before the end)"

# ---------------------------------------------------------------- text report

echo "Checking the text report"
run_report default -i "$data"
if ! grep -q "^freed_without_final_put \[" "$tmpdir/default.out" &&
   grep -q "^# findings: definite [1-9]" "$tmpdir/default.out"; then
	pass "default text report opens with the findings and hides possible ones"
else
	fail "default text report: no findings line, or lists freed_without_final_put without --all"
	show "$tmpdir/default.out" 20
fi
run_report text -i "$data" --all
if ok_status "$rc"; then
	pass "report (text) exit status $rc"
else
	fail "report (text) exited $rc"
	show "$tmpdir/text.err"
fi
for c in freed_without_final_put final_put_not_freed likely_leak double_put put_after_free; do
	pat=$(echo "$c" | sed 's/_/[_ -]/g')
	if grep -Eiq "$pat" "$tmpdir/text.out"; then
		pass "text report mentions $c"
	else
		fail "text report does not mention $c"
	fi
done
for s in $suspicious; do
	if grep -q "test_refleak_$s" "$tmpdir/text.out"; then
		pass "text report shows site test_refleak_$s"
	else
		fail "text report does not show site test_refleak_$s"
	fi
done
# the driver's double puts are refcount_t's: ref_trace_anomaly's kind names it
if awk '/^double_put \[/ { in_dp = 1 } /^$/ { in_dp = 0 }
	in_dp && /^      counter: refcount_t$/ { ok = 1 } END { exit !ok }' "$tmpdir/text.out"; then
	pass "text report: the double puts name their counter type, refcount_t"
else
	fail "text report: the double puts do not name refcount_t"
fi
if grep '"class": "double_put"' "$tmpdir/json.out" | grep -q '"counters": \["refcount_t"\]'; then
	pass "report --json: the double puts name their counter type, refcount_t"
else
	fail "report --json: the double puts do not name refcount_t"
fi
unlisted=$(echo "$scenarios" |
	awk -v s=" $suspicious" 'index(s, " " $1 " ") == 0 && !seen[$1]++ { print $1 }')
for s in $unlisted; do
	if ! grep -Eq "test_refleak_${s}([^_a-z]|\$)" "$tmpdir/text.out"; then
		pass "text report does not list test_refleak_$s"
	elif [ "$lost" != 0 ]; then
		note "text report lists site test_refleak_$s, with $lost lost events"
	else
		fail "text report lists site test_refleak_$s (its objects are balanced)"
	fi
done
[ "$err" = 0 ] || [ "$verbose" = 0 ] || show "$tmpdir/text.out" 80

run_report objects -i "$data" --objects --all
missing=""
# shellcheck disable=SC2013 # one address per word
for a in $(awk "$(suspicious_on 1)"' {
		for (i = 3; i <= NF; i++) if ($i ~ /^obj=/) {
			a = tolower(substr($i, 5)); sub(/^0x0*/, "", a); print a }
	}' "$objs"); do
	grep -qi "$a" "$tmpdir/objects.out" || missing="$missing $a"
done
if ok_status "$rc" && [ -z "$missing" ]; then
	pass "report --objects lists every suspicious driver object address"
else
	fail "report --objects (exit $rc) misses:$missing"
fi

for opt in --call-graph -g -ggraph,caller; do
	expect_grep "stacks$opt" vfs_write "report $opt shows stacks (vfs_write of control)" \
		-i "$data" "$opt"
done
for key in site count bytes age site,count count,bytes,age; do
	expect_grep sort test_refleak_leak_ref "report --sort $key" -i "$data" --sort "$key"
done

# ---------------------------------------------------------------- exit statuses

echo "Checking exit statuses"
expect_exit fail 3 out "report --fail-on-leak (prints the report)" -i "$data" --fail-on-leak
expect_exit failj 3 out "report --fail-on-leak --json (prints the report)" \
	-i "$data" --fail-on-leak --json
expect_exit badsort 129 err "report --sort no_such_key" -i "$data" --sort no_such_key
expect_exit nofile 1 err "report on a missing file" -i "$tmpdir/does-not-exist"

# ---------------------------------------------------------------- kmem-only

echo "Checking record --kmem-only"
if perf refleak record --kmem-only -o "$tmpdir/kmem.data" -- sleep 1 \
	> /dev/null 2> "$tmpdir/kmem-record.err"; then
	report_json kmem -i "$tmpdir/kmem.data"
	fp=$(jget "$tmpdir/kmem.flat" summary.events.final_put)
	if [ "$rc" = 0 ] && [ "$fp" = 0 ] && [ -s "$tmpdir/kmem.err" ]; then
		pass "kmem-only recording: report exits 0, final_put 0, warning on stderr"
	else
		fail "kmem-only recording: exit $rc, final_put '$fp' (want 0, 0, a warning)"
		show "$tmpdir/kmem.err" 10
	fi
else
	fail "perf refleak record --kmem-only failed"
	show "$tmpdir/kmem-record.err" 10
fi

# ---------------------------------------------------------------- pipe mode

echo "Checking pipe mode"
: > "$tmpdir/pobjs"
perf refleak record -o - -- sh "$drive" "$drv" "$tmpdir/pobjs" 1 balanced 3 cache leak_ref 2 cache \
	2> "$tmpdir/prec.err" | perf refleak report -i - --all --json --min-age 0 \
	> "$tmpdir/pipe.out" 2> "$tmpdir/pipe.err"
rc=$?
json_flatten "$tmpdir/pipe.out" > "$tmpdir/pipe.flat"
lost=$(jget "$tmpdir/pipe.flat" summary.lost_events)
json_objects "$tmpdir/pipe.flat" > "$tmpdir/pipe.objs"
if [ ! -f "$tmpdir/pobjs.done" ]; then
	fail "pipe mode: the recorded command did not complete"
	show "$tmpdir/prec.err" 10
elif [ -z "$lost" ]; then
	fail "pipe mode: report -i - (exit $rc) printed no JSON summary"
	show "$tmpdir/pipe.err" 10
else
	expect_report_classes pipe "$tmpdir/pobjs" "pipe mode" \
		"pipe mode: record -o - | report -i - finds the leaked references"
fi

# ---------------------------------------------------------------- record --refs

# Every get and put of the cache of error_path, error_path_kref and handoff:
# the report must name, for the objects whose error path forgot a put, the
# lookup's get (test_refleak_get under test_refleak_use) with certainty and
# no other get; the handed-over references are balanced and named nowhere.
echo "Checking record --refs"
expect_grep refs-hint \
	"which reference was never put: perf refleak record --refs test_refleak_leak_all" \
	"without --refs, a leak names the record command that would find its reference" -i "$data"
if ! perf list 2>/dev/null | grep -q 'ref_trace:ref_trace_ref'; then
	fail "record --refs: no ref_trace:ref_trace_ref in perf list" \
		"(kernel without the get/put patch)"
else
	: > "$tmpdir/robjs"
	perf refleak record --refs test_refleak_refs -o "$tmpdir/refs.data" -- \
		sh "$drive" "$drv" "$tmpdir/robjs" 1 error_path 6 cache error_path_kref 6 cache \
		handoff 6 cache > "$tmpdir/rrec.out" 2> "$tmpdir/rrec.err"
	run_report refs -i "$tmpdir/refs.data" --all --max-stack 2
	refleak_refs_summary "$tmpdir/refs.out" > "$tmpdir/refs.sum"
	if [ "$rc" != 0 ] || [ ! -f "$tmpdir/robjs.done" ]; then
		fail "record --refs: recording or report failed (report exit $rc)"
		show "$tmpdir/rrec.err" 10
	elif ! refleak_refs_named "$tmpdir/refs.sum"; then
		fail "record --refs: expected one likely_leak row of 6 objects in" \
			"test_refleak_refs, each with one reference taken at test_refleak_get" \
			"under test_refleak_use, certain"
		show "$tmpdir/refs.sum" 20
		show "$tmpdir/refs.out" 60
	else
		pass "record --refs: the 6 leaked objects name the lookup's get in" \
			"test_refleak_use, certain; the handed-over references are balanced"
	fi
fi

# ---------------------------------------------------------------- reclaim

echo reclaim > "$drv/control"
reclaim_needed=0
if grep -q "^leaked 0$" "$drv/status"; then
	pass "driver reclaimed its leaked objects"
else
	fail "driver status after reclaim: $(cat "$drv/status")"
fi

if [ "$err" = 0 ]; then
	echo "perf refleak end-to-end: all checks passed"
else
	echo "perf refleak end-to-end: FAILED"
fi
exit $err
