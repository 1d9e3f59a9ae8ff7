#!/usr/bin/env bash
# make series-builds: every prefix of the kernel series builds (bisectable),
# with CONFIG_REF_TRACE=y (and CONFIG_REF_TRACE_REFS=y, then =n) and
# CONFIG_REF_TRACE=n, without a warning, and W=1 clean on the
# .c files each patch touches; perf builds at every commit of the perf
# series; then the whole kernel series with CONFIG_TRACEPOINTS=n.  Small
# kernel (tinyconfig + kernel/configs/*.config), in a work tree and object
# directories of its own.  Not part of 'make check' (about 30 minutes here,
# mostly ccache hits).  SERIES_FROM=<n> and SERIES_TO=<m> build patches n
# to m only (SERIES_TO skips the perf series and CONFIG_TRACEPOINTS=n);
# SERIES_PERF_ONLY=1 builds the perf series alone, from its commit
# SERIES_PERF_FROM=<n> on.
. "$(dirname "$0")/lib.sh"
tree=$("$TOP/scripts/assemble-tree.sh")
wt=$CACHE/tree-series-$KEY
commits=$(git -C "$tree" rev-list --reverse pristine..kernel-top)
[ -n "$commits" ] || die "no kernel patches in the assembled tree"
[ -d "$wt" ] || git -C "$tree" worktree add -q --detach "$wt" pristine
out=$BUILD/series-builds
mkdir -p "$out"

# configure <objdir> <extra fragment...>: tinyconfig + the fragments, again
# at every step (a patch may add the options the fragments set).
configure() {
	local o=$1
	shift
	mkdir -p "$o"
	make -s -C "$wt" O="$o" ARCH=x86_64 tinyconfig >/dev/null
	"$wt/scripts/kconfig/merge_config.sh" -m -O "$o" "$o/.config" "$@" >/dev/null
	make -s -C "$wt" O="$o" ARCH=x86_64 olddefconfig >/dev/null
}
# build <objdir> <log> [targets...]: warnings and errors end up in <log>
build() {
	local o=$1 logf=$2
	shift 2
	locked make -s -C "$wt" O="$o" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" \
		-j"$JOBS" "$@" > "$logf" 2>&1
}

fail=0 i=0 prev=pristine
[ "${SERIES_PERF_ONLY:-0}" = 1 ] && commits=
[ -z "$commits" ] ||
printf '%-3s %-58s %-16s %-16s %-16s\n' "#" patch "REF_TRACE(_REFS)" "REF_TRACE only" "REF_TRACE=n"
for c in $commits; do
	i=$((i + 1))
	# SERIES_FROM=<n>: start at patch n (the earlier ones were checked);
	# SERIES_TO=<n>: stop after patch n
	if [ "$i" -lt "${SERIES_FROM:-1}" ]; then
		prev=$c
		continue
	fi
	[ -z "${SERIES_TO:-}" ] || [ "$i" -le "$SERIES_TO" ] || break
	git -C "$wt" checkout -q --detach "$c"
	files=$(git -C "$wt" diff --name-only "$prev" "$c" -- '*.c')
	row=()
	# before the patch that adds CONFIG_REF_TRACE_REFS, "REF_TRACE only"
	# is the first configuration: not built twice
	refs=0
	git -C "$wt" grep -q '^config REF_TRACE_REFS$' -- lib/Kconfig.debug && refs=1
	for mode in on refs-off off; do
		if [ $mode = refs-off ] && [ $refs = 0 ]; then
			row+=("(as the first)")
			continue
		fi
		o=$CACHE/kbuild-series-$mode-$KEY
		frags=("$TOP"/kernel/configs/*.config)
		[ $mode = refs-off ] && frags+=("$TOP/kernel/configs/series/refs-off.config")
		[ $mode = off ] && frags+=("$TOP/kernel/configs/cost/ref-trace-off.config")
		configure "$o" "${frags[@]}"
		opt=$(grep -c '^CONFIG_REF_TRACE=y' "$o/.config" || true)
		t0=$(date +%s)
		if ! build "$o" "$out/$i-$mode.log" bzImage; then
			row+=("BUILD FAILED"); fail=1; continue
		fi
		w=$(grep -c 'warning:' "$out/$i-$mode.log" || true)
		# W=1 on the touched files that this configuration compiles
		w1=0
		for f in $files; do
			[ -f "$o/${f%.c}.o" ] || continue
			touch "$wt/$f"
			build "$o" "$out/$i-$mode-w1.log" W=1 "${f%.c}.o" || { fail=1; w1=$((w1 + 1000)); }
			w1=$((w1 + $(grep -c 'warning:' "$out/$i-$mode-w1.log" || true)))
		done
		[ $((w + w1)) -eq 0 ] || fail=1
		row+=("$(( $(date +%s) - t0 ))s w$w W1:$w1 o$opt")
	done
	printf '%-3s %-58.58s %-16s %-16s %-16s\n' "$i" "$(git -C "$wt" log -1 --format=%s "$c")" "${row[@]}"
	prev=$c
done
[ -z "$commits" ] ||
echo "(w: warnings of the build; W1: warnings of W=1 on the patch's .c files; o1: the option is on)"
if [ -n "${SERIES_TO:-}" ]; then
	echo "SERIES_TO=$SERIES_TO: the perf series and CONFIG_TRACEPOINTS=n are not built"
	[ $fail -eq 0 ] && echo "series-builds: patches ${SERIES_FROM:-1} to $SERIES_TO built clean" ||
		echo "series-builds: FAILED (logs in $out)"
	exit $fail
fi

# The perf series: perf builds at each of its commits (the engine and its
# test alone first), warnings are errors in perf's build.
po=$CACHE/perf-series-obj-$KEY
mkdir -p "$po"
# SERIES_PERF_FROM=<n>: start at the perf series' commit n
for c in $(git -C "$tree" rev-list --reverse kernel-top..assembled | tail -n +"${SERIES_PERF_FROM:-1}"); do
	git -C "$wt" checkout -q --detach "$c"
	t0=$(date +%s)
	if locked make -s -C "$wt/tools/perf" O="$po" CC="ccache gcc" "${PERF_MAKE_OPTS[@]}" \
		-j"$JOBS" > "$out/perf-$c.log" 2>&1; then
		echo "perf at '$(git -C "$wt" log -1 --format=%s "$c")': built in $(( $(date +%s) - t0 )) s"
	else
		echo "perf at '$(git -C "$wt" log -1 --format=%s "$c")': BUILD FAILED (see $out/perf-$c.log)"
		fail=1
	fi
done

if [ "${SERIES_PERF_ONLY:-0}" = 1 ]; then
	[ $fail -eq 0 ] && echo "series-builds: the perf series built clean" ||
		echo "series-builds: FAILED (logs in $out)"
	exit $fail
fi
o=$CACHE/kbuild-series-notp-$KEY
configure "$o" "$TOP/kernel/configs/guest.config" "$TOP/kernel/configs/series/tracepoints-off.config"
t0=$(date +%s)
if grep -q '^CONFIG_TRACEPOINTS=y' "$o/.config"; then
	echo "CONFIG_TRACEPOINTS=n: not possible in this configuration"; fail=1
elif build "$o" "$out/notp.log" bzImage; then
	w=$(grep -c 'warning:' "$out/notp.log" || true)
	echo "whole series, CONFIG_TRACEPOINTS=n: built in $(( $(date +%s) - t0 )) s, $w warnings"
	[ "$w" -eq 0 ] || fail=1
else
	echo "whole series, CONFIG_TRACEPOINTS=n: BUILD FAILED (see $out/notp.log)"; fail=1
fi
[ $fail -eq 0 ] && echo "series-builds: every step built clean" || echo "series-builds: FAILED (logs in $out)"
exit $fail
