# shellcheck shell=bash
# Common settings for the perf refleak pipeline scripts. Sourced, not run.
#
# Everything expensive lives in a cache outside the clone so that fresh
# clones (CI starts from one every time) reuse the extracted source, the
# assembled tree, the kernel and perf object directories and ccache.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${PERF_REFLEAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perf-refleak}
BUILD=$TOP/build
PINNED_DEB_DIR=${PINNED_DEB_DIR:-$TOP/../shared/ksrc}
# The kernel version this project is based on.
BASE_VERSION=7.2.13
BASE_DEB=linux-source-7.2_7.2.13-1_all.deb

export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
# Never run two big builds at once on a 2-core machine.
BUILD_LOCK=$CACHE/build.lock
JOBS=${JOBS:-$(nproc)}

# perf build options. No libLLVM, libpython or libperl: they would make the
# guest's initramfs several times larger and perf refleak needs none of them.
# BPF skeletons are built (perf refleak record -b), with Debian's clang and
# perf's in-tree libbpf and bpftool.
# Rust objects cannot be read by Debian 12's llvm-ar (see README).
PERF_MAKE_OPTS=(NO_RUST=1 NO_LIBLLVM=1 NO_LIBPYTHON=1 NO_LIBPERL=1
	NO_CAPSTONE=1 NO_JEVENTS=1 BUILD_BPF_SKEL=1 LIBUNWIND=1
	NO_SDT=1)

log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }
die() { printf '[%s] error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# The source key names the cache directories that depend on which kernel
# source is used: the pinned one, or a tree given with KSRC=.
source_key() {
	if [ -n "${KSRC:-}" ]; then
		printf 'ksrc-%s\n' "$(realpath "$KSRC" | sha256sum | cut -c1-12)"
	elif [ -n "${KDEB:-}" ]; then
		printf 'deb-%s\n' "$(sha256sum < "$KDEB" | cut -c1-12)"
	else
		printf 'pinned-%s\n' "$BASE_VERSION"
	fi
}

KEY=$(source_key)
TREE=$CACHE/tree-$KEY		# assembled git work tree
KBUILD=$CACHE/kbuild-$KEY	# kernel object directory
PERF_OBJ=$CACHE/perf-obj-$KEY	# perf object directory
PERF_PREFIX=$CACHE/perf-install-$KEY	# perf install prefix (exec path, man pages)
PERF_ASAN_OBJ=$CACHE/perf-asan-obj-$KEY
PERF_ASAN_PREFIX=$CACHE/perf-asan-install-$KEY

mkdir -p "$CACHE" "$BUILD"

# Run a command holding the build lock.
locked() { flock "$BUILD_LOCK" "$@"; }

# Hash of a list of files and directories (paths and contents), used as
# a stamp so that unchanged inputs cost nothing on the next run.
inputs_hash() {
	(cd "$TOP" && { find "$@" -type f -print0 2>/dev/null || true; } |
		LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
}

# The identity the series is posted and signed off with: whoever runs the
# script, as git format-patch -s would take it (git config user.name and
# user.email, or GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL).  Empty when unset.
series_identity() {
	local name email
	name=${GIT_AUTHOR_NAME:-$(git -C "$TOP" config user.name 2>/dev/null || true)}
	email=${GIT_AUTHOR_EMAIL:-$(git -C "$TOP" config user.email 2>/dev/null || true)}
	[ -n "$name" ] && [ -n "$email" ] && printf '%s <%s>\n' "$name" "$email"
	return 0
}

# sign_commits <repo> <base> <tip> <parent> "<Name <email>>": the commits
# base..tip of <repo> made again on top of <parent> with that identity as
# author and committer, dated now, each message ending in its
# Signed-off-by; prints the new tip.
sign_commits() {
	local repo=$1 base=$2 tip=$3 parent=$4 ident=$5 c
	local name=${ident% <*} email=${ident##*<}
	email=${email%>}
	for c in $(git -C "$repo" rev-list --reverse "$base..$tip"); do
		parent=$(git -C "$repo" log -1 --format=%B "$c" |
			git -C "$repo" interpret-trailers --if-exists addIfDifferent \
				--trailer "Signed-off-by: $ident" |
			GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email \
			GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
			git -C "$repo" commit-tree "$c^{tree}" -p "$parent")
	done
	echo "$parent"
}
