#!/usr/bin/env bash
# Build the guest's base initramfs (build/initramfs.cpio): busybox-static,
# guest/init, and perf's install prefix at the same absolute path as on the
# host (perf finds its exec path and shell tests there) with the shared
# libraries it links. run-guest.sh appends a small per-run archive.
. "$(dirname "$0")/lib.sh"

perf=$PERF_PREFIX/bin/perf
[ -x "$perf" ] || die "no perf at $perf: run 'make' first"
out=$BUILD/initramfs.cpio
if [ -f "$out" ] && [ "$out" -nt "$perf" ] && [ "$out" -nt "$TOP/guest/init" ] &&
	[ "$out" -nt "$PERF_PREFIX/libexec/perf-core" ]; then
	exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,proc,sys,dev,tmp,etc,root,out}
cp /bin/busybox "$root/bin/busybox"
install -m 0755 "$TOP/guest/init" "$root/init"
mkdir -p "$root/$PERF_PREFIX"
cp -a "$PERF_PREFIX"/{bin,libexec} "$root/$PERF_PREFIX/"
ln -s "$PERF_PREFIX/bin/perf" "$root/usr/bin/perf"
# The libraries perf links, and the dynamic loader, at their host paths.
ldd "$perf" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' | while read -r lib; do
	mkdir -p "$root/$(dirname "$lib")"
	cp -L "$lib" "$root/$lib"
done
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
log "initramfs: $(du -h "$out" | cut -f1)"
