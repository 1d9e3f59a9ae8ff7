#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What the perf refleak shell tests share: their verdicts and what the
# tests of record -b and top need to run.

pass() { echo "[PASS] $*"; }
# shellcheck disable=SC2034 # err is the test's exit status
fail() { echo "[FAIL] $*"; err=1; }

# pass when 'perf refleak report --fail-on-leak' of <what> exited <rc>
# with no definite or likely finding in <report> (4: events were lost and
# nothing was found, but the recording cannot show that there is none)
refleak_no_finding() { # <what> <report> <rc>
	findings=$(sed -n 's/^# findings: //p' "$2")
	if [ "$3" = 0 ]; then
		pass "$1: no definite or likely finding: $findings"
	elif [ "$3" = 4 ] && grep -q '^# lost events: [1-9]' "$2"; then
		pass "$1: no definite or likely finding ($findings), events lost:"
		grep '^# lost events' "$2"
	else
		fail "$1: report --fail-on-leak exited $3:"
		head -n 60 "$2"
	fi
}

# exit 2, saying why, unless root, perf and the ref_trace events are there
refleak_skip_unless_traced() {
	[ "$(id -u)" = 0 ] || { echo "[Skip] No root permission"; exit 2; }
	command -v perf > /dev/null 2>&1 || { echo "[Skip] No perf binary in PATH"; exit 2; }
	if ! perf list tracepoint 2>/dev/null | grep -q 'ref_trace:ref_trace_set'; then
		echo "[Skip] No tracepoint ref_trace:ref_trace_set (CONFIG_REF_TRACE)"
		exit 2
	fi
}

# why 'perf refleak <what>' (record -b, top) cannot run here: perf built
# without BPF skeletons, a kernel without BTF; nothing when it can
refleak_bpf_missing() { # <what>
	if ! perf version --build-options | grep -q 'bpf_skeletons: \[ on'; then
		echo "perf built without BPF skeletons: no 'perf refleak $1'"
	elif [ ! -r /sys/kernel/btf/vmlinux ]; then
		echo "The kernel has no BTF (CONFIG_DEBUG_INFO_BTF): no 'perf refleak $1'"
	fi
}

# exit 2, saying why, unless root, perf with BPF skeletons, a kernel with
# BTF and the ref_trace events are there for <what> (record -b, top)
refleak_bpf_skip_unless_ready() { # <what>
	refleak_skip_unless_traced
	why=$(refleak_bpf_missing "$1")
	[ -z "$why" ] || { echo "[Skip] $why"; exit 2; }
}

# remove a test's temporary directory, or keep it (REFLEAK_KEEP=1) and say where
refleak_rm_tmpdir() { # <dir>
	[ -n "$1" ] || return 0
	if [ "${REFLEAK_KEEP:-0}" != 1 ]; then
		rm -rf "$1"
	else
		echo "Temporary files kept in $1"
	fi
}
