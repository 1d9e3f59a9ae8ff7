# perf refleak: the kernel series, the perf subcommand, and the pipeline
# that builds both from Linux 7.2.13 and runs them in a qemu guest.
#
# Caches (source, assembled tree, object directories, ccache) live in
# $(PERF_REFLEAK_CACHE), default ~/.cache/perf-refleak; build output in build/.
# KSRC=/path/to/linux uses your own 7.2 tree; KDEB=file.deb a linux-source .deb.

SHELL := /bin/bash
export KSRC KDEB PERF_REFLEAK_CACHE FIXTURES
S := scripts

.PHONY: all perf kernel tree initramfs deps vm-shell demo check bench series export-series fixtures realbugs fresh-check realistic kasan long-run cost series-builds help clean

all: perf ## build perf (with perf refleak) as build/perf

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 14

deps: ## install the Debian packages everything needs (idempotent)
	@$(S)/deps.sh

tree: deps ## assemble the source tree: pristine + kernel/series + perf refleak
	@$(S)/assemble-tree.sh >/dev/null

perf: deps ## build perf from the assembled tree
	@$(S)/build-perf.sh

kernel: deps ## build the guest kernel (tinyconfig + kernel/configs/*.config)
	@$(S)/build-kernel.sh

initramfs: perf ## the guest's initramfs: busybox, perf and its libraries
	@$(S)/make-initramfs.sh

vm-shell: kernel initramfs ## boot the guest with an interactive shell on the console
	@$(S)/vm-shell.sh

demo: kernel initramfs ## record the driver's scenarios in the guest and print the report
	@$(S)/demo.sh

check: deps ## build and run every test; ends with "N passed, N failed, N skipped"
	@$(S)/check.sh

bench: kernel initramfs ## perf refleak report vs perf kmem and perf script on a large recording
	@$(S)/bench.sh

realistic: deps ## the realistic guest (x86_64 defconfig + our options): workload figures, findings
	@$(S)/realistic.sh

long-run: kernel initramfs ## one long record -b of the balanced workload with holders (LONG_RUN_SECONDS, default 7200): bytes, RSS, maps, findings
	@$(S)/long-run.sh

kasan: deps ## the small guest with KASAN (32-KiB task stacks): record -b's test, known stacks, no KASAN report
	@$(S)/kasan.sh

cost: deps ## what CONFIG_REF_TRACE costs on the realistic kernel: bloat-o-meter off/on, bench per life cycle
	@$(S)/cost.sh

series-builds: deps ## every prefix of the kernel series builds with the option on and off, W=1 clean; TRACEPOINTS=n
	@$(S)/series-builds.sh

fresh-check: ## make demo + make check on a new minimal Debian 12 root (mmdebstrap), cold
	@$(S)/fresh-check.sh

realbugs: deps ## real upstream refcount leaks reintroduced: found with the bug, not without
	@$(S)/realbugs.sh

fixtures: kernel initramfs ## re-record the golden fixtures (tests/golden/) in the guest; FIXTURES="pipe" only those
	@$(S)/record-golden.sh

series: tree ## the two postings, signed off by you: build/series/kernel/ and build/series/perf/
	@$(S)/format-series.sh

export-series: tree ## write kernel/*.patch back from a branch of the assembled tree (REF=, default kernel-top)
	@$(S)/export-series.sh

clean: ## remove build/ (the caches stay)
	rm -rf build
