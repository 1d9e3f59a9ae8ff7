#!/usr/bin/env bash
# An interactive guest on this terminal: perf is on PATH, debugfs and
# tracefs are mounted. Leave with 'reboot -f' (or Ctrl-a x).
. "$(dirname "$0")/lib.sh"
exec qemu-system-x86_64 -accel tcg -cpu max -smp "${GUEST_CPUS:-2}" -m "${GUEST_MEM:-3G}" \
	-kernel "$BUILD/bzImage" -initrd "$BUILD/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 loglevel=4 slab_nomerge tsc=reliable" -nographic -no-reboot
