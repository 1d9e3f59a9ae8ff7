#!/usr/bin/env bash
# Build perf from the assembled tree and install it into a cached prefix
# (binary, exec path with the shell tests, man pages), linked as build/perf.
#   build-perf.sh          the regular perf used on the host and in the guest
#   build-perf.sh --asan   perf with AddressSanitizer and UBSan, for bad-input tests
. "$(dirname "$0")/lib.sh"

obj=$PERF_OBJ prefix=$PERF_PREFIX link=$BUILD/perf extra=()
if [ "${1:-}" = --asan ]; then
	obj=$PERF_ASAN_OBJ prefix=$PERF_ASAN_PREFIX link=$BUILD/perf-asan
	# WERROR=0: gcc 12 warns maybe-uninitialized in perf's own util/ under the
	# sanitizers; the regular build stays -Werror.
	# No BPF skeletons (the last BUILD_BPF_SKEL given wins): the sanitized
	# perf reads files, and is the perf that says it cannot record -b.
	extra=(BUILD_BPF_SKEL=0 WERROR=0 EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
		LDFLAGS="-fsanitize=address,undefined")
fi

tree=$("$TOP/scripts/assemble-tree.sh")
# Nothing to do when this exact tree was built and installed with these
# options: a second 'make' rebuilds nothing (perf's own make would still
# spend ~20 s re-checking features and dependencies).
stamp="$(git -C "$tree" rev-parse HEAD^{tree}) ${PERF_MAKE_OPTS[*]} ${extra[*]}"
if [ -x "$prefix/bin/perf" ] && [ "$(cat "$prefix/.refleak-built" 2>/dev/null)" = "$stamp" ]; then
	log "perf is up to date ($prefix)"
	ln -sfn "$prefix/bin/perf" "$link"
	exit 0
fi
rm -f "$prefix/.refleak-built"
mkdir -p "$obj"
# PERF_UNLOCKED=1: do not wait for the build lock (a developer's perf build
# while a long kernel build holds it; never two perf builds at once).
[ "${PERF_UNLOCKED:-0}" = 1 ] && locked() { "$@"; }
log "building perf in $obj"
start=$(date +%s)
# Only the install targets we need: install-bin brings the exec path with
# tests/shell, which 'perf test' reads; install-man lets 'perf help' work.
locked make -s -C "$tree/tools/perf" O="$obj" prefix="$prefix" CC="ccache gcc" \
	"${PERF_MAKE_OPTS[@]}" "${extra[@]}" -j"$JOBS" install-bin >"$obj/build.log" 2>&1 ||
	{ tail -40 "$obj/build.log" >&2; die "perf build failed (log: $obj/build.log)"; }
if [ "${1:-}" != --asan ]; then
	# asciidoc is a python3 script: use the system's python3, whose
	# asciidoc module Debian installs, not another python3 earlier in PATH.
	PATH=/usr/bin:/bin:$PATH locked make -s -C "$tree/tools/perf" O="$obj" prefix="$prefix" \
		"${PERF_MAKE_OPTS[@]}" install-man >"$obj/man.log" 2>&1 ||
		{ tail -20 "$obj/man.log" >&2; die "perf man pages failed (log: $obj/man.log)"; }
fi
# perf's build quietly leaves the skeletons out when clang or its BPF
# target is missing: refuse such a perf rather than find out in the guest.
if [ "${1:-}" != --asan ] && ! "$prefix/bin/perf" version --build-options | grep -q 'bpf_skeletons: \[ on'; then
	die "perf was built without BPF skeletons (clang with the BPF target needed; log: $obj/build.log)"
fi
log "perf built in $(( $(date +%s) - start )) s"
echo "$stamp" > "$prefix/.refleak-built"
ln -sfn "$prefix/bin/perf" "$link"
