#!/usr/bin/env bash
# make demo: boot the guest, record the test driver's scenarios with
# perf refleak, print the real report (with stacks).
. "$(dirname "$0")/lib.sh"
out=$BUILD/demo
"$TOP/scripts/run-guest.sh" "$TOP/guest/demo.sh" "$out"
cat "$out/report.txt"
echo
echo "(recording: $out/perf.data, JSON: $out/report.json)"
