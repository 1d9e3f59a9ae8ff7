#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/report-summary.sh (what 'make realistic' prints) on the JSON
# report of a golden fixture, against tests/golden/expected/report-summary.out:
# a change of the report's JSON that breaks the summary fails here, not
# after a 26-minute kernel build.
#   usage: report-summary.sh [--update] <perf binary>
# Exit: 0 as expected, 1 it differs, 2 cannot run (reason printed).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
update=0
[ "${1:-}" = --update ] && { update=1; shift; }
perf=${1:-}
[ -x "$perf" ] || { echo "# SKIP: usage: $0 [--update] <perf binary>"; exit 2; }
perf=$(readlink -f "$perf")
command -v jq > /dev/null || { echo "# SKIP: no jq"; exit 2; }
work=$(mktemp -d /tmp/refleak-summary.XXXXXX) || exit 2
trap 'rm -rf "$work"' EXIT
gzip -dc "$top/tests/golden/scenarios.data.gz" > "$work/perf.data"
gzip -dc "$top/tests/golden/kallsyms.gz" > "$work/kallsyms"
(cd "$work" && "$perf" refleak report --kallsyms kallsyms --all --json) > "$work/report.json" 2> /dev/null ||
	{ echo "not ok report-summary - perf refleak report --all --json failed"; exit 1; }
"$top/scripts/report-summary.sh" "$work/report.json" > "$work/summary" 2>&1 ||
	{ echo "not ok report-summary - the script failed:"; cat "$work/summary"; exit 1; }
expected=$top/tests/golden/expected/report-summary.out
if [ $update = 1 ]; then
	cp "$work/summary" "$expected"
	echo "updated $expected"
elif diff -u "$expected" "$work/summary"; then
	echo "ok report-summary"
else
	echo "not ok report-summary - the summary differs"
	exit 1
fi
