#!/bin/sh
# perf refleak top (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# 'perf refleak top' shows the objects followed now by the programs of
# 'record -b', by allocation site.  With the test driver (lib/test_refleak.c):
# five objects whose reference is never put are shown at their site, in
# their cache, and balanced objects are not.  Then its usage errors.
#
# Exit: 0 pass, 1 fail, 2 skip (reason printed).

# shellcheck source=lib/refleak_bpf.sh
. "$(dirname "$0")"/lib/refleak_bpf.sh

err=0
tmpdir=
drv=/sys/kernel/debug/test_refleak

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[ -w "$drv/control" ] && echo reclaim > "$drv/control" 2>/dev/null
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
	trap - EXIT INT TERM
}
# shellcheck disable=SC2154 # st is set inside the trap
trap 'st=$?; cleanup; exit $st' EXIT
trap 'err=1; exit 1' INT TERM

refleak_bpf_skip_unless_ready "top"
tmpdir=$(mktemp -d /tmp/__perf_test_refleak_top.XXXXXX) || exit 1

# the rows of the last view: "objects change site cache"
last_view() { # <output>
	awk '/^perf refleak top:/ { n = 0; delete row; next }
	     $1 ~ /^[0-9]+$/ && NF == 6 { row[++n] = $1 " " $2 " " $5 " " $6 }
	     END { for (i = 1; i <= n; i++) print row[i] }' "$1"
}

if [ -w "$drv/control" ]; then
	echo reclaim > "$drv/control"
	perf refleak top -d 1 -- sh -c "echo 'leak_ref 5 cache' > $drv/control &&
		echo 'balanced 7 cache' > $drv/control && sleep 3" \
		> "$tmpdir/top.out" 2> "$tmpdir/top.err"
	rc=$?
	last_view "$tmpdir/top.out" > "$tmpdir/last"
	leak=$(grep ' test_refleak_leak_ref+0x[0-9a-f]* test_refleak_obj$' "$tmpdir/last")
	if [ "$rc" != 0 ]; then
		fail "top around the driver's scenarios exited $rc:"
		head -n 20 "$tmpdir/top.err"
	elif [ "$(echo "$leak" | cut -d' ' -f1)" = 5 ]; then
		pass "top: $leak"
	else
		fail "top: not 5 objects at test_refleak_leak_ref in test_refleak_obj:"
		cat "$tmpdir/top.out"
	fi
	if grep -q 'test_refleak_balanced' "$tmpdir/top.out"; then
		fail "top shows balanced objects:"
		grep 'test_refleak_balanced' "$tmpdir/top.out"
	else
		pass "top: the balanced objects, freed, are not shown"
	fi
	# the first view counts them as new
	if grep -q ' +5 .* test_refleak_leak_ref+' "$tmpdir/top.out"; then
		pass "top: the change column counts the 5 new objects"
	else
		fail "top: no view with a change of +5 at test_refleak_leak_ref:"
		cat "$tmpdir/top.out"
	fi
	echo reclaim > "$drv/control"
else
	echo "[Note] No test driver ($drv, CONFIG_TEST_REFLEAK): its leaks are not shown"
fi

# -E: rows per view
perf refleak top -d 1 -E 1 -- sleep 2 > "$tmpdir/e1.out" 2> "$tmpdir/e1.err"
rc=$?
rows=$(awk '/^perf refleak top:/ { if (n > max) max = n; n = 0; next }
	    $1 ~ /^[0-9]+$/ { n++ } END { if (n > max) max = n; print max + 0 }' "$tmpdir/e1.out")
views=$(grep -c '^perf refleak top:' "$tmpdir/e1.out")
if [ "$rc" = 0 ] && [ "$views" -ge 1 ] && [ "$rows" -le 1 ]; then
	pass "top -E 1 -- sleep 2: $views views, at most $rows row each"
else
	fail "top -E 1 -- sleep 2 exited $rc, $views views, up to $rows rows:"
	cat "$tmpdir/e1.out" "$tmpdir/e1.err"
fi

# usage errors exit 129, a command that cannot run 1, each with one message
check_exit() { # <status> <args...>
	want=$1
	shift
	perf refleak top "$@" > "$tmpdir/x.out" 2> "$tmpdir/x.all"
	rc=$?
	# the line that says the programs count is not an error's
	grep -v '^\[ perf refleak: counting in the kernel' "$tmpdir/x.all" > "$tmpdir/x.err"
	if [ "$rc" = "$want" ] && [ "$(wc -l < "$tmpdir/x.err")" = 1 ] &&
	   [ ! -s "$tmpdir/x.out" ]; then
		pass "top $*: exit $rc, $(cat "$tmpdir/x.err")"
	else
		fail "top $* exited $rc (want $want):"
		cat "$tmpdir/x.out" "$tmpdir/x.err"
	fi
}
check_exit 129 -d 0 -- true
check_exit 1 -- /nonexistent/command

exit $err
