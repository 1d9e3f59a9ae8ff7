#!/usr/bin/env bash
# make cost: what each option of the series costs on a kernel like the ones
# users run (the realistic guest's configuration: x86_64 defconfig, -O2,
# jump labels, plus what the guest needs).  Not part of 'make check': it
# builds three defconfig kernels (about 26 minutes each cold here):
#   off   KERNEL_FLAVOR=realistic-off: neither option (the test driver kept)
#   life  KERNEL_FLAVOR=realistic-life: CONFIG_REF_TRACE, the life-cycle
#         events, without CONFIG_REF_TRACE_REFS
#   on    KERNEL_FLAVOR=realistic: both, as the realistic guest runs
#   1. size: bloat-o-meter off -> life (what CONFIG_REF_TRACE adds) and
#      life -> on (what CONFIG_REF_TRACE_REFS adds), the KUnit suite's
#      symbols counted apart.  COST_UNPATCHED=1 adds the same configuration
#      built from the pristine tree (no series).
#   2. time: the test driver's "bench" (guest/cost.sh) in each kernel: a
#      life cycle of a refcount_t, a file_ref_t and an rcuref_t (the
#      birth, a get, a put, the final put) with the events disabled, and
#      enabled and recorded by perf record (without and with callchains).
# Everything is printed; the guests' raw lines are in build/cost/.
. "$(dirname "$0")/lib.sh"
out=$BUILD/cost
mkdir -p "$out"
tree=$("$TOP/scripts/assemble-tree.sh")
for flavor in realistic-off realistic-life realistic; do
	KERNEL_FLAVOR=$flavor "$TOP/scripts/build-kernel.sh" >&2
done
off=$CACHE/kbuild-realistic-off-$KEY life=$CACHE/kbuild-realistic-life-$KEY on=$CACHE/kbuild-realistic-$KEY

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
for k in ${unp:+unpatched:$unp} off:$off life:$life on:$on; do
	read -r text data bss _ < <(size "${k#*:}/vmlinux" | tail -n 1)
	printf '%-34s %10s %10s %10s\n' "${k%%:*}" "$text" "$data" "$bss"
done
if [ -n "${unp:-}" ]; then
	echo "-- bloat-o-meter -c unpatched off (the slab patches, unconditional)"
	bloat -c "$unp/vmlinux" "$off/vmlinux" | grep -E '^(add/remove|Total)'
fi
# The KUnit suite is a test, not an option's cost: its symbols apart.
kunit_syms=$(nm "$on/lib/tests/ref_trace_kunit.o" 2>/dev/null | awk '$2 ~ /[tTdDbBrR]/ { print $3 }' | sort -u)
cost_of() { # <option> <from> <to>: bloat-o-meter from -> to, KUnit apart
	local f=$out/bloat-$1.txt
	bloat "$2/vmlinux" "$3/vmlinux" > "$f"
	awk -v opt="$1" -v syms="$(echo "$kunit_syms" | tr '\n' ' ')" '
	BEGIN { n = split(syms, a, " "); for (i = 1; i <= n; i++) k[a[i]] = 1 }
	/^add\/remove|^Function|^Total|^$/ { next }
	NF >= 4 { name = $1; d = $NF; if (name in k) kd += d; else od += d; if (d > 0) up++; else if (d < 0) down++ }
	END { printf "-- %s: %+d bytes (%d symbols grew, %d shrank), KUnit suite %+d bytes\n", opt, od, up, down, kd }' "$f"
	grep -E '^Total' "$f"
	echo "   largest growths (all in $f):"
	sed -n '/^Function/,$p' "$f" | sed -n '2,8p'
}
cost_of CONFIG_REF_TRACE "$off" "$life"
cost_of CONFIG_REF_TRACE_REFS "$life" "$on"
calls() { objdump -d --no-show-raw-insn "$1/vmlinux" | grep -c "call.*<$2>"; }
echo "-- call sites of the out-of-line hooks:"
for f in __ref_trace_set __ref_trace_final_put __ref_trace_anomaly; do
	printf '   %-24s %s (life), %s (on)\n' "$f" "$(calls "$life" $f)" "$(calls "$on" $f)"
done
for f in __ref_trace_get __ref_trace_sub __file_ref_put_traced __rcuref_put_traced; do
	printf '   %-24s %s (on)\n' "$f" "$(calls "$on" $f)"
done

"$TOP/scripts/build-perf.sh" >&2
"$TOP/scripts/make-initramfs.sh" >&2
for k in off life on; do
	suffix=-realistic
	[ $k = on ] || suffix=-realistic-$k
	BZIMAGE=$BUILD/bzImage$suffix GUEST_TIMEOUT=${GUEST_TIMEOUT:-1200} \
		"$TOP/scripts/run-guest.sh" "$TOP/guest/cost.sh" "$out/$k" >&2 ||
		die "the $k guest failed (see $out/$k/console.log)"
	[ -s "$out/$k/bench" ] || die "no bench result from the $k guest: $(cat "$out/$k/bench.err" 2>/dev/null)"
done
echo "== time: one life cycle (birth, get, put, final put), TCG guest"
printf '%-44s %12s %12s\n' mode "cycles/life" "ns/life"
for k in off life on; do
	awk -v k=$k '{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		label = (k == "off" ? "neither option" : k == "life" ? "CONFIG_REF_TRACE" : "both") ", " $1
		printf "%-44s %12.1f %12.1f\n", label, v["cycles"] / v["n"], v["ns"] / v["n"] }' "$out/$k/bench"
done
for k in off life on; do
	[ -s "$out/$k/bench.err" ] && { echo "guest errors ($k):"; cat "$out/$k/bench.err"; }
done
exit 0
