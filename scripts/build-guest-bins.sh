#!/usr/bin/env bash
# Build the static programs the guest runs (it has busybox and perf only):
# guest/workload/balanced.c, the balanced real workload of the
# false-positive check, and tests/realbugs/trigger.c, the userspace side of
# the real-bug cases.  Output in build/guest-bin/; prints the paths.
. "$(dirname "$0")/lib.sh"

out=$BUILD/guest-bin
mkdir -p "$out"
for src in "$TOP/guest/workload/balanced.c" "$TOP/tests/realbugs/trigger.c"; do
	[ -f "$src" ] || continue
	bin=$out/$(basename "$src" .c)
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		gcc -static -O2 -Wall -Wextra -Werror -o "$bin.tmp" "$src" -lpthread ||
			die "cannot build $src"
		mv "$bin.tmp" "$bin"
	fi
	echo "$bin"
done
