#!/usr/bin/env bash
# Install the Debian packages the pipeline needs. Idempotent: asks apt only
# when something is missing.
set -euo pipefail

packages=(
	# kernel and perf builds
	build-essential bc bison flex cpio xz-utils kmod pkg-config ccache
	libelf-dev libdw-dev libtraceevent-dev libunwind-dev libslang2-dev
	libzstd-dev libssl-dev libcap-dev libnuma-dev python3
	# perf's BPF skeletons (clang, llvm-strip) and the guest kernel's BTF (pahole)
	clang llvm dwarves
	# checkpatch: scripts/spdxcheck.py imports ply and git (GitPython)
	python3-ply python3-git
	# perf man pages (perf help refleak)
	asciidoc-base xmlto man-db
	# the guest
	qemu-system-x86 busybox-static
	# host-side tests
	jq time
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

[ "$(id -u)" -eq 0 ] || { echo "deps: missing ${missing[*]}; run 'make deps' as root" >&2; exit 1; }
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
