#!/usr/bin/env bash
# The summary 'make realistic' prints from a 'perf refleak report --all
# --json' document: recording length and event rates, findings per tier,
# what limits them, and the largest outstanding groups.  Read from the JSON,
# not the text; tests/host/report-summary.sh runs it on a golden fixture.
#   usage: report-summary.sh <report.json>
set -eu
command -v jq > /dev/null || { echo "report-summary.sh: jq is needed (make deps)" >&2; exit 2; }
jq -r '.summary as $s | "recording: \($s.recording_s) s",
	($s.events | to_entries[] | "  \(.key): \(.value) events, \(
		if $s.recording_s > 0 then (.value / $s.recording_s) | floor else 0 end)/s"),
	"findings: definite \($s.tiers.definite), likely \($s.tiers.likely), possible \($s.tiers.possible)",
	"lost events: \($s.lost_events), unmatched final puts: \($s.unmatched_final_puts), samples with their CPU'"'"'s previous timestamp: \($s.same_time_samples), copies dropped: \($s.copied_samples)",
	"largest live groups (outstanding):",
	([.findings[] | select(.class == "outstanding")] | sort_by(-.count) | .[:5][] | "  \(.count) \(.cache) \(.site)")' \
	"$1"
