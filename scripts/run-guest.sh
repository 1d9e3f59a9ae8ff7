#!/usr/bin/env bash
# Boot the guest kernel under qemu (TCG) with the base initramfs plus a
# per-run archive holding <run-script> as /guest/run.sh and the given files
# under /guest/, then unpack what the guest left in /out into <outdir>.
#   run-guest.sh <run-script> <outdir> [file...]
# The guest hands results back as a tar stream on a virtio disk. A guest
# that hangs or panics fails within GUEST_TIMEOUT seconds and the console's
# tail is printed.
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: run-guest.sh <run-script> <outdir> [file...]"
script=$1 outdir=$2
shift 2
timeout_s=${GUEST_TIMEOUT:-900}
mkdir -p "$outdir"
rm -rf "${outdir:?}"/*

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/guest"
cp "$script" "$stage/guest/run.sh"
for f in "$@"; do cp -a "$f" "$stage/guest/"; done
(cd "$stage" && find guest | cpio -o -H newc --quiet) > "$stage/run.cpio"
cat "$BUILD/initramfs.cpio" "$stage/run.cpio" > "$stage/initrd"
truncate -s "${GUEST_DISK:-2G}" "$stage/disk.img"

console=$outdir/console.log
# GUEST_ICOUNT=1: the guest's clock counts its instructions (one a
# nanosecond), so that what a guest measures in its time (iterations in 15
# s) is a count of instructions: the same from one run to the next, free
# of the host's load and of what TCG's emulation of each instruction costs.
# Slower (one host thread for all vCPUs).
icount=
[ "${GUEST_ICOUNT:-0}" = 1 ] && icount="-icount shift=0,sleep=off"
# tsc=reliable: TCG's TSC follows qemu's virtual clock, one for all vCPUs,
# but a loaded host delays the guest's ticks and the clocksource watchdog
# then rejects the TSC.  x86 marks sched_clock unstable with it, each CPU's
# clock stops between ticks and the recordings lose the order of events.
log "booting the guest ($(basename "$script"), timeout ${timeout_s}s${icount:+, $icount})"
rc=0
# shellcheck disable=SC2086 # $icount: options, or none
timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 \
	-accel tcg $icount -cpu max -smp "${GUEST_CPUS:-2}" -m "${GUEST_MEM:-3G}" \
	-kernel "${BZIMAGE:-$BUILD/bzImage}" -initrd "$stage/initrd" \
	-append "console=ttyS0 panic=-1 loglevel=4 slab_nomerge tsc=reliable ${GUEST_CMDLINE:-}" \
	-drive file="$stage/disk.img",format=raw,if=virtio \
	-nographic -no-reboot -monitor none -serial "file:$console" \
	</dev/null >/dev/null 2>"$outdir/qemu.err" || rc=$?

if [ "$rc" -eq 124 ]; then
	tail -n 40 "$console" >&2
	die "guest timed out after ${timeout_s}s (console: $console)"
fi
if ! grep -q '^guest: results written' "$console"; then
	tail -n 40 "$console" >&2
	cat "$outdir/qemu.err" >&2
	die "guest did not finish (qemu exit $rc; console: $console)"
fi
tar -xf "$stage/disk.img" -C "$outdir"
