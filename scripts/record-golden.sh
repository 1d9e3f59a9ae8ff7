#!/usr/bin/env bash
# make fixtures: re-record the golden fixtures of tests/golden/ in the
# guest (tests/golden/record-guest.sh), store them gzipped with the guest's
# kallsyms, and write the expected reports anew with build/perf
# (tests/host/golden.sh --update).  Review the diff before committing: the
# expected files are what the host test holds perf refleak report to.
. "$(dirname "$0")/lib.sh"
#
# FIXTURES="pipe bpf" re-records only those, in a boot of their own: each
# then keeps that boot's kallsyms as <name>.kallsyms.gz, and the other
# fixtures' expected reports stay as they are.
dir=$TOP/tests/golden
out=$BUILD/golden-record
all="scenarios pipe nocallchain kmem-only bpf"
fixtures=${FIXTURES:-$all}
only=$(mktemp -d)
trap 'rm -rf "$only"' EXIT
# shellcheck disable=SC2086 # one name a line
printf '%s\n' $fixtures > "$only/only"
"$TOP/scripts/run-guest.sh" "$dir/record-guest.sh" "$out" "$only/only"
for f in $fixtures; do
	[ -s "$out/$f.data" ] || die "the guest recorded no $f.data (see $out/guest.log)"
	gzip -9n < "$out/$f.data" > "$dir/$f.data.gz"
	cp "$out/$f.objects" "$dir/$f.objects"
	[ "$fixtures" = "$all" ] || gzip -9n < "$out/kallsyms" > "$dir/$f.kallsyms.gz"
done
if [ "$fixtures" = "$all" ]; then
	gzip -9n < "$out/kallsyms" > "$dir/kallsyms.gz"
	# one boot for all: no fixture keeps a kallsyms of its own
	rm -f "$dir"/*.kallsyms.gz
fi
log "fixtures: $(du -ch "$dir"/*.gz | tail -n 1 | cut -f1) (kernel $(cat "$out/uname"))"
bash "$TOP/tests/host/golden.sh" --update "$BUILD/perf"
