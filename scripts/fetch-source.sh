#!/usr/bin/env bash
# Print the path of a pristine Linux source tree to build on, extracting it
# into the cache on first use. Preference order:
#   1. KSRC=<dir>       a tree the user names (used in place, never modified)
#   2. KDEB=<file>      a linux-source-7.2 .deb the user names
#   3. the pinned .deb  ../shared/ksrc/, checked against its SHA256SUMS
#   4. Debian's archive through apt (unstable suite), same checksum
. "$(dirname "$0")/lib.sh"

pinned_sha() {
	awk -v f="$BASE_DEB" '$2 == f { print $1 }' "$PINNED_DEB_DIR/SHA256SUMS" 2>/dev/null
}

# Fetch linux-source-7.2 from the archive without touching the system's apt
# configuration: a private sources list derived from the machine's own
# Debian entry, and private state/cache directories.
fetch_from_archive() {
	local dir=$1 uri work
	uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 ~ /debian/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
	[ -n "$uri" ] || die "no Debian apt entry on this machine to derive the archive from; give KSRC= or KDEB="
	work=$(mktemp -d)
	mkdir -p "$work/lists/partial" "$work/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri unstable main" > "$work/sources.list"
	local opts=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$work/lists" -o Dir::Cache::Archives="$work/archives"
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
	log "fetching linux-source-7.2 from the archive's unstable suite"
	apt-get "${opts[@]}" -qq update >&2
	(cd "$dir" && apt-get "${opts[@]}" -qq download "linux-source-7.2=${BASE_VERSION}-1" >&2) ||
		die "linux-source-7.2 ${BASE_VERSION}-1 is no longer in the archive; give KSRC= or KDEB="
	rm -rf "$work"
}

extract_deb() {
	local deb=$1 dest=$2
	[ -d "$dest/linux-source-7.2" ] && { echo "$dest/linux-source-7.2"; return; }
	log "extracting $(basename "$deb") into $dest"
	rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-7.2.tar.xz |
		tar -xJ -C "$dest.tmp"
	mv "$dest.tmp" "$dest"
	echo "$dest/linux-source-7.2"
}

if [ -n "${KSRC:-}" ]; then
	[ -f "$KSRC/Makefile" ] && [ -d "$KSRC/tools/perf" ] ||
		die "KSRC=$KSRC is not a Linux source tree (no Makefile or tools/perf)"
	realpath "$KSRC"
	exit 0
fi

if [ -n "${KDEB:-}" ]; then
	[ -f "$KDEB" ] || die "KDEB=$KDEB: no such file"
	extract_deb "$KDEB" "$CACHE/src/$(basename "$KDEB" .deb)-$(sha256sum < "$KDEB" | cut -c1-12)"
	exit 0
fi

want=$(pinned_sha)
dest=$CACHE/src/${BASE_DEB%.deb}
if [ -d "$dest/linux-source-7.2" ]; then
	echo "$dest/linux-source-7.2"
	exit 0
fi
deb=$PINNED_DEB_DIR/$BASE_DEB
if [ ! -f "$deb" ]; then
	mkdir -p "$CACHE/debs"
	deb=$CACHE/debs/$BASE_DEB
	[ -f "$deb" ] || fetch_from_archive "$CACHE/debs"
fi
[ -n "$want" ] || want=30a8c5fc63f9028a62e6d7b3f7f43bee67425dbce2a05fceba83f9b87c92083d
got=$(sha256sum < "$deb" | cut -d' ' -f1)
[ "$got" = "$want" ] || die "$deb: checksum $got, expected $want"
extract_deb "$deb" "$dest"
