#!/usr/bin/env bash
# make cost: what CONFIG_REF_TRACE costs on a kernel like the ones users run
# (the realistic guest's configuration: x86_64 defconfig, -O2, jump labels,
# plus what the guest needs).  Not part of 'make check': it builds a second
# defconfig kernel (about 40 minutes cold here).
#   1. size: the realistic kernel (CONFIG_REF_TRACE=y, with its KUnit suite
#      and the test driver) against KERNEL_FLAVOR=realistic-off (the same
#      without CONFIG_REF_TRACE, the driver kept), with bloat-o-meter; the
#      KUnit suite's symbols are counted apart.  COST_UNPATCHED=1 adds the
#      same configuration built from the pristine tree (no series).
#   2. time: the test driver's "bench" (guest/cost.sh) in both kernels: a
#      refcount_t life cycle (refcount_set, a get, a put, the final put)
#      without the option, with the events disabled, and enabled and
#      recorded by perf record (without and with callchains).
# Everything is printed; the guests' raw lines are in build/cost/.
. "$(dirname "$0")/lib.sh"
out=$BUILD/cost
mkdir -p "$out"
tree=$("$TOP/scripts/assemble-tree.sh")
KERNEL_FLAVOR=realistic "$TOP/scripts/build-kernel.sh" >&2
KERNEL_FLAVOR=realistic-off "$TOP/scripts/build-kernel.sh" >&2
on=$CACHE/kbuild-realistic-$KEY off=$CACHE/kbuild-realistic-off-$KEY

if [ "${COST_UNPATCHED:-0}" = 1 ]; then
	# The pristine source in a work tree of its own, same configuration
	# (the series' options do not exist there and are dropped).
	wt=$CACHE/tree-pristine-$KEY unp=$CACHE/kbuild-realistic-unpatched-$KEY
	[ -d "$wt" ] || git -C "$tree" worktree add -q --detach "$wt" pristine
	if [ ! -f "$unp/vmlinux" ]; then
		mkdir -p "$unp"
		make -s -C "$wt" O="$unp" ARCH=x86_64 defconfig >/dev/null
		"$wt/scripts/kconfig/merge_config.sh" -m -O "$unp" "$unp/.config" \
			"$TOP/kernel/configs/refleak.config" "$TOP"/kernel/configs/realistic/*.config \
			"$TOP/kernel/configs/cost/ref-trace-off.config" >/dev/null
		make -s -C "$wt" O="$unp" ARCH=x86_64 olddefconfig >/dev/null
		log "building the unpatched kernel in $unp"
		start=$(date +%s)
		locked make -s -C "$wt" O="$unp" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" \
			-j"$JOBS" vmlinux || die "unpatched build failed"
		log "unpatched kernel built in $(( $(date +%s) - start )) s"
	fi
fi

bloat() { python3 "$tree/scripts/bloat-o-meter" "$@"; }
echo "== size: x86_64 defconfig + the guest's options, $(git -C "$tree" describe --always 2>/dev/null)"
printf '%-34s %10s %10s %10s\n' kernel text data bss
for k in ${unp:+unpatched:$unp} off:$off on:$on; do
	read -r text data bss _ < <(size "${k#*:}/vmlinux" | tail -n 1)
	printf '%-34s %10s %10s %10s\n' "${k%%:*}" "$text" "$data" "$bss"
done
if [ -n "${unp:-}" ]; then
	echo "-- bloat-o-meter -c unpatched off (the slab patches, unconditional)"
	bloat -c "$unp/vmlinux" "$off/vmlinux" | grep -E '^(add/remove|Total)'
fi
# The KUnit suite is a test, not the option's cost: its symbols apart.
kunit_syms=$(nm "$on/lib/tests/ref_trace_kunit.o" 2>/dev/null | awk '$2 ~ /[tTdDbBrR]/ { print $3 }' | sort -u)
bloat "$off/vmlinux" "$on/vmlinux" > "$out/bloat-off-on.txt"
awk -v syms="$(echo "$kunit_syms" | tr '\n' ' ')" '
BEGIN { n = split(syms, a, " "); for (i = 1; i <= n; i++) k[a[i]] = 1 }
/^add\/remove|^Function|^Total|^$/ { next }
NF >= 4 { name = $1; d = $NF; if (name in k) kd += d; else od += d; if (d > 0) up++; else if (d < 0) down++ }
END { printf "-- bloat-o-meter off on: option %+d bytes (%d symbols grew, %d shrank), KUnit suite %+d bytes\n", od, up, down, kd }' \
	"$out/bloat-off-on.txt"
grep -E '^Total' "$out/bloat-off-on.txt"
echo "-- largest growths (all in $out/bloat-off-on.txt):"
sed -n '/^Function/,$p' "$out/bloat-off-on.txt" | sed -n '2,11p'
echo "-- call sites of the out-of-line hooks in the 'on' vmlinux:"
for f in __ref_trace_set __ref_trace_final_put __ref_trace_anomaly; do
	printf '   %-24s %s\n' "$f" "$(objdump -d --no-show-raw-insn "$on/vmlinux" | grep -c "call.*<$f>")"
done

"$TOP/scripts/build-perf.sh" >&2
"$TOP/scripts/make-initramfs.sh" >&2
for k in off on; do
	suffix=-realistic
	[ $k = off ] && suffix=-realistic-off
	BZIMAGE=$BUILD/bzImage$suffix GUEST_TIMEOUT=${GUEST_TIMEOUT:-1200} \
		"$TOP/scripts/run-guest.sh" "$TOP/guest/cost.sh" "$out/$k" >&2 ||
		die "the $k guest failed (see $out/$k/console.log)"
	[ -s "$out/$k/bench" ] || die "no bench result from the $k guest: $(cat "$out/$k/bench.err" 2>/dev/null)"
done
echo "== time: one refcount_t life cycle (refcount_set, get, put, final put), TCG guest"
printf '%-34s %12s %12s\n' mode "cycles/life" "ns/life"
for k in off on; do
	awk -v k=$k '$1 != "warmup" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		label = k == "off" ? "CONFIG_REF_TRACE=n" : "CONFIG_REF_TRACE=y, " $1
		printf "%-34s %12.1f %12.1f\n", label, v["cycles"] / v["n"], v["ns"] / v["n"] }' "$out/$k/bench"
done
[ -s "$out/on/bench.err" ] && { echo "guest errors:"; cat "$out/on/bench.err"; }
exit 0
