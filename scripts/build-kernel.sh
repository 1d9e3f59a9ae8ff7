#!/usr/bin/env bash
# Build the guest kernel from the assembled tree, with ccache, in a cached
# object directory:
#   KERNEL_FLAVOR=small (default)  tinyconfig + kernel/configs/*.config;
#                                  build/bzImage, build/vmlinux
#   KERNEL_FLAVOR=realistic        x86_64 defconfig + kernel/configs/refleak.config
#                                  + kernel/configs/realistic/*.config;
#                                  build/bzImage-realistic, build/vmlinux-realistic
#   KERNEL_FLAVOR=realistic-off    the same without CONFIG_REF_TRACE
#                                  (+ kernel/configs/cost/ref-trace-off.config),
#                                  for 'make cost'; build/*-realistic-off
#   KERNEL_FLAVOR=realistic-life   the same with the life-cycle events only
#                                  (+ kernel/configs/cost/refs-off.config),
#                                  for 'make cost'; build/*-realistic-life
#   KERNEL_FLAVOR=kasan            the small kernel with KASAN
#                                  (+ kernel/configs/kasan/*.config: THREAD_SIZE
#                                  32 KiB), for 'make kasan'; build/*-kasan
. "$(dirname "$0")/lib.sh"

tree=$("$TOP/scripts/assemble-tree.sh")
flavor=${KERNEL_FLAVOR:-small}
base=tinyconfig suffix=
case $flavor in
small) ;;
realistic) base=defconfig suffix=-realistic KBUILD=$CACHE/kbuild-realistic-$KEY ;;
realistic-off|realistic-life) base=defconfig suffix=-$flavor KBUILD=$CACHE/kbuild-$flavor-$KEY ;;
kasan) suffix=-kasan KBUILD=$CACHE/kbuild-kasan-$KEY ;;
*) die "KERNEL_FLAVOR=$flavor: small, realistic, realistic-off, realistic-life or kasan" ;;
esac
# KERNEL_FRAGMENTS="a.config b.config" picks fragments from kernel/configs/
# (e.g. guest.config alone for a kernel without our options).
if [ "$flavor" = realistic ]; then
	fragments=("$TOP/kernel/configs/refleak.config" "$TOP"/kernel/configs/realistic/*.config)
elif [ "$flavor" = realistic-off ]; then
	fragments=("$TOP/kernel/configs/refleak.config" "$TOP"/kernel/configs/realistic/*.config
		   "$TOP/kernel/configs/cost/ref-trace-off.config")
elif [ "$flavor" = realistic-life ]; then
	fragments=("$TOP/kernel/configs/refleak.config" "$TOP"/kernel/configs/realistic/*.config
		   "$TOP/kernel/configs/cost/refs-off.config")
elif [ "$flavor" = kasan ]; then
	fragments=("$TOP"/kernel/configs/*.config "$TOP"/kernel/configs/kasan/*.config)
elif [ -n "${KERNEL_FRAGMENTS:-}" ]; then
	read -ra fragments <<< "$KERNEL_FRAGMENTS"
	fragments=("${fragments[@]/#/$TOP/kernel/configs/}")
else
	fragments=("$TOP"/kernel/configs/*.config)
fi
kmake() { make -s -C "$tree" O="$KBUILD" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" "$@"; }

# Regenerate .config only when a fragment changed; otherwise let kbuild's
# own dependency tracking decide what to rebuild.
want=$(inputs_hash "${fragments[@]#"$TOP"/}")-${KERNEL_FRAGMENTS:-all}-$flavor
if [ ! -f "$KBUILD/.config" ] || [ "$(cat "$KBUILD/.refleak-config" 2>/dev/null)" != "$want" ]; then
	log "configuring: $base + ${fragments[*]##*/}"
	mkdir -p "$KBUILD"
	kmake $base >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$KBUILD" "$KBUILD/.config" "${fragments[@]}" >/dev/null
	kmake olddefconfig >/dev/null
	# A fragment line that did not survive olddefconfig (a typo, or a
	# missing dependency) would silently give a different guest: refuse.
	# A later fragment overrides an earlier one, as in merge_config.sh.
	missing=$(awk '/^CONFIG_[A-Z0-9_]+=/ { split($0, kv, "="); want[kv[1]] = $0 }
		/^# CONFIG_[A-Z0-9_]+ is not set/ { want[$2] = "" }
		END { for (k in want) if (want[k] != "") print want[k] }' "${fragments[@]}" |
		sort | while read -r line; do
			grep -qxF "$line" "$KBUILD/.config" || echo "$line"
		done)
	[ -z "$missing" ] || die "config options not set as requested (missing dependency?):
$missing"
	echo "$want" > "$KBUILD/.refleak-config"
fi

# Nothing to build when this exact kernel source (the tree up to the last
# kernel patch, branch kernel-top) was built with this configuration: a second 'make kernel' is free.
stamp="$(git -C "$tree" rev-parse 'kernel-top^{tree}') $want"
if [ -f "$KBUILD/arch/x86/boot/bzImage" ] &&
   [ "$(cat "$KBUILD/.refleak-built" 2>/dev/null)" = "$stamp" ]; then
	log "kernel is up to date ($KBUILD)"
else
	rm -f "$KBUILD/.refleak-built"
	log "building the kernel in $KBUILD"
	start=$(date +%s)
	locked make -s -C "$tree" O="$KBUILD" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" -j"$JOBS" bzImage
	log "kernel built in $(( $(date +%s) - start )) s"
	echo "$stamp" > "$KBUILD/.refleak-built"
fi
cp "$KBUILD/arch/x86/boot/bzImage" "$BUILD/bzImage.tmp" && mv "$BUILD/bzImage.tmp" "$BUILD/bzImage$suffix"
ln -sf "$KBUILD/vmlinux" "$BUILD/vmlinux$suffix"
