#!/usr/bin/env bash
# The kernel source is chosen in a fixed order: KSRC, then KDEB, then the
# pinned .deb (checksum verified), then the archive. Exercise the order and
# the checksum refusal with small fake trees and .debs in a scratch cache.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
fetch=$top/scripts/fetch-source.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() { # <name> <expected> <actual>
	if [ "$2" = "$3" ]; then echo "ok $1"; else echo "not ok $1 - expected '$2', got '$3'"; failures=$((failures + 1)); fi
}

# A fake kernel tree and a fake linux-source .deb holding it.
mk_tree() { mkdir -p "$1/tools/perf" && echo "# $2" > "$1/Makefile"; }
mk_deb() { # <deb path> <marker>
	local d=$tmp/debroot-$2
	mk_tree "$d-src/linux-source-7.2" "$2"
	mkdir -p "$d/usr/src" "$d/DEBIAN"
	tar -cJf "$d/usr/src/linux-source-7.2.tar.xz" -C "$d-src" linux-source-7.2
	printf 'Package: linux-source-7.2\nVersion: 7.2.13-1\nArchitecture: all\nMaintainer: test <t@localhost>\nDescription: fake\n' > "$d/DEBIAN/control"
	dpkg-deb -b -Zgzip "$d" "$1" >/dev/null
}
mk_tree "$tmp/ksrc" ksrc
mk_deb "$tmp/user.deb" user-deb
mkdir -p "$tmp/pinned"
mk_deb "$tmp/pinned/linux-source-7.2_7.2.13-1_all.deb" pinned
(cd "$tmp/pinned" && sha256sum linux-source-7.2_7.2.13-1_all.deb > SHA256SUMS)

run() { env -u KSRC -u KDEB PERF_REFLEAK_CACHE="$tmp/cache" PINNED_DEB_DIR="$tmp/pinned" "$@" "$fetch" 2>/dev/null; }
marker() { head -n 1 "$1/Makefile" 2>/dev/null | cut -c3-; }

check "KSRC wins over KDEB" ksrc "$(marker "$(run KSRC="$tmp/ksrc" KDEB="$tmp/user.deb")")"
check "KSRC is used in place" "$tmp/ksrc" "$(run KSRC="$tmp/ksrc")"
check "KDEB wins over the pinned .deb" user-deb "$(marker "$(run KDEB="$tmp/user.deb")")"
check "pinned .deb by default" pinned "$(marker "$(run)")"
check "a second call reuses the extraction" "$(run)" "$(run)"

# A pinned .deb whose checksum does not match is refused.
rm -rf "$tmp/cache"
echo "0000000000000000000000000000000000000000000000000000000000000000  linux-source-7.2_7.2.13-1_all.deb" > "$tmp/pinned/SHA256SUMS"
run >/dev/null; rc=$?
check "checksum mismatch is refused" 1 "$rc"
check "nothing extracted after the refusal" "" "$(ls "$tmp/cache/src" 2>/dev/null)"

# Not a kernel tree.
mkdir -p "$tmp/empty"
run KSRC="$tmp/empty" >/dev/null; rc=$?
check "KSRC that is no kernel tree is refused" 1 "$rc"

[ "$failures" -eq 0 ]
