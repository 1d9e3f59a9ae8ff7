#!/bin/sh
# Runs inside the guest (as /guest/run.sh, from scripts/record-golden.sh):
# records the golden fixtures of tests/golden/ with perf refleak record,
# driving the test driver's scenarios, and leaves them in /out with the
# driver's objects lines and this boot's /proc/kallsyms.  Small on purpose:
# a few objects per scenario, cache and kmalloc.
drv=/sys/kernel/debug/test_refleak
cd /tmp || exit 1
[ -w "$drv/control" ] || { echo "golden: no test driver $drv (CONFIG_TEST_REFLEAK)"; exit 1; }
echo reclaim > "$drv/control"

# The recorded command: "<scenario> <n> <allocator>" triples, each written to
# the driver's control file, its objects file kept in <name>.objects; then
# a sleep for the kfree_rcu() frees.
cat > /tmp/drive.sh << 'EOS'
drv=$1 objs=$2 wait=$3
shift 3
while [ $# -ge 3 ]; do
	echo "$1 $2 $3" > "$drv/control" || exit 1
	cat "$drv/objects" >> "$objs"
	shift 3
done
sleep "$wait"
EOS

# record <name> <wait> <perf refleak record options> -- <triples>
# (only the fixtures named in /guest/only, when scripts/record-golden.sh
# was given names)
record() {
	name=$1 wait=$2
	shift 2
	if [ -f /guest/only ] && ! grep -qx "$name" /guest/only; then
		return 0
	fi
	opts=
	while [ "$1" != -- ]; do opts="$opts $1"; shift; done
	shift
	: > "/out/$name.objects"
	# shellcheck disable=SC2086 # options are split on purpose
	perf refleak record $opts -- sh /tmp/drive.sh "$drv" "/out/$name.objects" "$wait" "$@" \
		2> "/out/$name.record.log"
	echo "golden: $name: perf refleak record exit $?" >&2
	echo reclaim > "$drv/control"
}

# Every scenario, cache and kmalloc, with stacks.
record scenarios 4 -o /out/scenarios.data -- \
	balanced 3 cache balanced 2 kmalloc leak_ref 3 cache leak_all 3 cache free_no_put 2 cache \
	put_no_free 3 cache put_no_free 2 kmalloc percpu 2 cache rcu 3 cache rcu 2 kmalloc \
	put_after_free 2 cache double_put 2 kmalloc
# Pipe mode: perf.data streamed to stdout (the report reads it on stdin).
record pipe 2 -o - -- leak_ref 2 cache put_no_free 2 kmalloc balanced 2 cache > /out/pipe.data
# No callchains.
record nocallchain 2 --no-call-graph -o /out/nocallchain.data -- \
	leak_ref 2 cache free_no_put 1 cache put_no_free 1 kmalloc balanced 2 cache
# Kmem events only, no final puts: the report must say it cannot judge.
record kmem-only 1 --kmem-only -o /out/kmem-only.data -- leak_ref 2 cache balanced 2 cache
# record -b: the objects followed in the kernel, written when it ends.
record bpf 2 -b -o /out/bpf.data -- \
	balanced 3 cache balanced 2 kmalloc leak_ref 3 cache leak_all 3 cache put_no_free 3 cache \
	put_after_free 2 cache double_put 2 kmalloc

cat /proc/kallsyms > /out/kallsyms
uname -r > /out/uname
