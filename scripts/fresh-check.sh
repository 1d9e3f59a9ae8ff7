#!/usr/bin/env bash
# make fresh-check: the README's two commands on a Debian 12 root file
# system that has nothing but a minimal base, git and make: proof that the
# scripts install everything they need.  Builds the root with mmdebstrap from
# the archive this machine's apt already uses, clones this repository's HEAD
# into it (with ../shared/ksrc, the pinned kernel source), and runs
# 'make demo' then 'make check' in a chroot, from empty caches.  Not part of
# 'make check': it is a cold build (about 30 minutes here).
#   FRESH_ROOT=<dir>   where the root goes (default /var/tmp/perf-refleak-fresh;
#                      removed first)
. "$(dirname "$0")/lib.sh"

root=${FRESH_ROOT:-/var/tmp/perf-refleak-fresh}
[ "$(id -u)" -eq 0 ] || die "fresh-check needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null ||
	{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null ||
	  die "cannot install mmdebstrap"; }

# This machine's apt sources, as files: mmdebstrap pastes them in.
sources=()
[ -n "$(grep -s '^deb ' /etc/apt/sources.list)" ] && sources+=(/etc/apt/sources.list)
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || die "no apt sources on this machine"

umount_all() {
	for m in dev/pts dev proc sys; do
		mountpoint -q "$root/$m" && umount -l "$root/$m"
	done
	return 0
}
trap umount_all EXIT
umount_all
rm -rf "$root"
start=$(date +%s)
log "building a minimal bookworm root in $root"
mmdebstrap --quiet --variant=minbase --include=git,make,ca-certificates bookworm "$root" \
	"${sources[@]}" || die "mmdebstrap failed"
log "root file system: $(( $(date +%s) - start )) s, $(chroot "$root" dpkg-query -W | wc -l) packages"
chroot "$root" dpkg-query -W -f='${Package}\n' | sort > "$BUILD/fresh-packages-before"

mkdir -p "$root/work/shared"
git clone -q "$TOP" "$root/work/main"
cp -a "$TOP/../shared/ksrc" "$root/work/shared/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

run() { # <label> <make target>
	local t0 rc
	t0=$(date +%s)
	chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
		bash -c "cd /work/main && make $2" > "$BUILD/fresh-$1.log" 2>&1
	rc=$?
	log "make $2 in the fresh root: exit $rc, $(( $(date +%s) - t0 )) s (log: build/fresh-$1.log)"
	tail -n 3 "$BUILD/fresh-$1.log" >&2
	return $rc
}
rc=0
run demo demo || rc=1
run check check || rc=1
chroot "$root" dpkg-query -W -f='${Package}\n' | sort > "$BUILD/fresh-packages-after"
echo "packages the scripts installed ($(comm -13 "$BUILD/fresh-packages-before" "$BUILD/fresh-packages-after" | wc -l)):"
comm -13 "$BUILD/fresh-packages-before" "$BUILD/fresh-packages-after" | tr '\n' ' ' | fold -s -w 100
echo
echo "fresh-check: $(( $(date +%s) - start )) s in all"
tail -n 1 "$BUILD/fresh-check.log"
exit $rc
