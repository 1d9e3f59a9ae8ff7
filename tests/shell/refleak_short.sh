#!/bin/sh
# perf refleak on short recordings of commands (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# A recording of a short command ends while the shell that started perf,
# perf itself and whatever the command left running still hold their
# objects: their files, their task state, the exec state their children
# replaced.  None of that is a leak.  Records commands that fork, exec and
# exit children, plainly and with -b when BPF is there, and expects no
# definite or likely finding: 'report --fail-on-leak' must exit 0 (or 4,
# events lost, no finding).
#
# Exit: 0 pass, 1 fail, 2 skip (reason printed).

# shellcheck source=lib/refleak_bpf.sh
. "$(dirname "$0")"/lib/refleak_bpf.sh

err=0
tmpdir=

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	refleak_rm_tmpdir "$tmpdir"
	trap - EXIT INT TERM
}
# shellcheck disable=SC2154 # st is set inside the trap
trap 'st=$?; cleanup; exit $st' EXIT
trap 'err=1; exit 1' INT TERM

refleak_skip_unless_traced
no_bpf=$(refleak_bpf_missing "record -b")
[ -z "$no_bpf" ] || echo "$no_bpf: the -b recordings are not made"
tmpdir=$(mktemp -d /tmp/__perf_test_refleak_short.XXXXXX) || exit 1

# a shell whose children exec and exit while it runs
loop='for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; ls / > /dev/null; done'

short() { # <name> <record options...> -- <command...>
	name=$1
	shift
	data=$tmpdir/$name.data
	if ! perf refleak record -o "$data" "$@" > "$tmpdir/$name.rec" 2>&1; then
		fail "$name: perf refleak record $* failed:"
		tail -n 5 "$tmpdir/$name.rec"
		return
	fi
	perf refleak report -i "$data" --fail-on-leak -g > "$tmpdir/$name.txt" 2>&1
	refleak_no_finding "$name" "$tmpdir/$name.txt" $?
	rm -f "$data"
}

short true -- true
short loop -- sh -c "$loop"
short system-wide -a -- sh -c "$loop"
if [ -z "$no_bpf" ]; then
	short bpf-loop -b -- sh -c "$loop"
	short bpf-system-wide -b -a -- sh -c "$loop"
fi
exit $err
