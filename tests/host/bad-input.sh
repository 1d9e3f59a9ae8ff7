#!/bin/bash
# perf refleak report: bad inputs fail cleanly (host side, sanitizer build)
# SPDX-License-Identifier: GPL-2.0
#
# usage: bad-input.sh <perf binary> [<input directory>]
#
# Records a small valid perf refleak recording on the host (--kmem-only: the
# host kernel has the kmem tracepoints but not ref_trace), derives bad inputs
# from it (empty, truncated at several points, corrupted with a fixed seed,
# foreign files, kmem-only, no callchains, pipe mode) and runs
# 'perf refleak report' on each under a timeout (HANG_SECONDS, default 180:
# a report of these small inputs takes seconds, one that spins never ends,
# and a loaded host is slow).  Each case must end with
# the exit status documented in perf-refleak(1) (1: unreadable input, 0:
# report printed, with a warning for an incomplete recording such as
# kmem-only, 4: the same with --fail-on-leak, 129: usage), print a message
# on stderr
# and nothing from the sanitizers, and must not hang or crash.
#
# The inputs are written to <input directory> (kept) or to a temporary
# directory (removed).  Output is TAP-like: "ok <name>" / "not ok <name> -
# <reason>", with "# " diagnostics.  Exit: 0 all passed, 1 a case failed,
# 2 cannot run (reason printed).
#
# Environment: HANG_SECONDS (above); MAX_ERR_LINES (default 4) bounds the
# stderr of a fatal error ("one clear message"); ASAN_OPTIONS/UBSAN_OPTIONS
# are passed through (UBSAN_OPTIONS defaults to print_stacktrace=1).

set -u

PERF=${1:-}
indir=${2:-}
max_err_lines=${MAX_ERR_LINES:-4}
hang=${HANG_SECONDS:-180}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# Full malloc stacks, so that lsan.supp can name libsubcmd's known leak.
export ASAN_OPTIONS=${ASAN_OPTIONS:-fast_unwind_on_malloc=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0}
# Recording the inputs is not what is tested: there, fast malloc stacks and
# no leak check (with full stacks an ASan perf record of a busy host, a
# kernel build say, spends minutes unwinding and hits the timeout).
rec_env=(env "ASAN_OPTIONS=fast_unwind_on_malloc=1:detect_leaks=0")

cannot_run() {
	echo "# SKIP: $*"
	exit 2
}

if [ -z "$PERF" ]; then
	cannot_run "usage: $0 <perf binary> [<input directory>]"
fi
if [ ! -x "$PERF" ]; then
	cannot_run "$PERF is not an executable"
fi
PERF=$(readlink -f "$PERF")
if [ "$(id -u)" != 0 ]; then
	cannot_run "recording system-wide kmem events needs root"
fi
for tool in timeout dd od head wc grep; do
	command -v "$tool" > /dev/null || cannot_run "no $tool"
done

if [ -n "$indir" ]; then
	mkdir -p "$indir" || cannot_run "cannot create $indir"
	work=$(readlink -f "$indir")
	keep=1
else
	work=$(mktemp -d /tmp/refleak-bad-input.XXXXXX) || cannot_run "mktemp failed"
	keep=0
fi
out=$work/out
mkdir -p "$out"

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	if [ "$keep" = 0 ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'echo "# interrupted"; exit 1' INT TERM

# ------------------------------------------------------------------ helpers

kmem_events=kmem:kmalloc,kmem:kmem_cache_alloc,kmem:kfree,kmem:kmem_cache_free

# u64 at a byte offset of a file (decimal)
u64_at() {
	od -A n -t u8 -j "$2" -N 8 "$1" | tr -d ' \n'
}

# write_bytes FILE OFFSET HEXBYTES...: overwrite bytes in place
write_bytes() {
	local f=$1 off=$2 s=""
	shift 2
	for b in "$@"; do
		s="$s\\x$b"
	done
	# shellcheck disable=SC2059 # the format is the escaped bytes
	printf "$s" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# write_u64 FILE OFFSET VALUE: little endian
write_u64() {
	local f=$1 off=$2 v=$3 i bytes=()
	for i in 0 1 2 3 4 5 6 7; do
		bytes+=("$(printf '%02x' $(( (v >> (8 * i)) & 0xff )))")
	done
	write_bytes "$f" "$off" "${bytes[@]}"
}

# u_at FILE OFFSET BYTES: an unsigned little-endian integer of 2 or 4 bytes
u_at() {
	od -A n -t "u$3" -j "$2" -N "$3" "$1" | tr -d ' \n'
}

# record_after FILE DATA_OFFSET POS: the offset of the first record of the
# data section at or after POS (records walked from the start: a
# TRACING_DATA record, type 66, is followed by its data, padded to 8)
record_after() {
	local f=$1 o=$2 pos=$3 type size
	while [ "$o" -lt "$pos" ]; do
		type=$(u_at "$f" "$o" 4)
		size=$(u_at "$f" $((o + 6)) 2)
		[ "$size" -gt 0 ] || break
		[ "$type" = 66 ] && size=$((size + ($(u_at "$f" $((o + 8)) 4) + 7) / 8 * 8))
		o=$((o + size))
	done
	echo "$o"
}

# cut_file SRC DST BYTES
cut_file() {
	head -c "$3" "$1" > "$2"
}

total=0
failed=0

# check NAME RC EXPECTED ERRFILE OUTFILE [SAYS]
# EXPECTED is a list of accepted statuses ("1" or "1 0"); SAYS, text the
# message must hold.
check() {
	local name=$1 rc=$2 expected=$3 err=$4 outf=$5 says=${6:-} reason="" lines limit
	total=$((total + 1))
	if [ "$rc" = 124 ] && [[ " $expected " != *" 124 "* ]]; then
		reason="hang: killed by timeout after ${hang}s"
	elif [ "$rc" -ge 128 ] && [[ " $expected " != *" $rc "* ]]; then
		reason="killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
	elif grep -q 'LeakSanitizer' "$err"; then
		reason="memory leak reported by LeakSanitizer (ASAN_OPTIONS=detect_leaks=0 to ignore): $(grep -m1 'SUMMARY' "$err")"
	elif grep -Eq 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|MemorySanitizer|runtime error|Segmentation|SIGSEGV|SIGBUS|SIGABRT' "$err"; then
		reason="sanitizer/crash report on stderr: $(grep -Em1 'Sanitizer|runtime error|Segmentation|SIG' "$err")"
	elif [[ " $expected " != *" $rc "* ]]; then
		reason="exit status $rc, expected ${expected// / or }"
	elif [ ! -s "$err" ]; then
		reason="no message on stderr"
	elif [ -n "$says" ] && ! grep -qF "$says" "$err"; then
		reason="the message does not say '$says'"
	elif [ "$rc" = 1 ]; then
		lines=$(grep -c . "$err")
		limit=$max_err_lines
		# Random damage can hit several kinds of record (an unknown type,
		# an impossible CPU, ...): perf warns once per kind, up to two
		# lines each, before the fatal message.  A warning per damaged
		# record would still exceed this.
		[[ $name == corrupt-data-seed* ]] && limit=$((max_err_lines + 4))
		# perf's warnings of a header never finished: 3 lines
		[[ $name == unfinished-* ]] && limit=$((max_err_lines + 3))
		if [ "$lines" -gt "$limit" ] && [[ $name != usage-* ]]; then
			reason="fatal error printed $lines lines on stderr (want one clear message, <= $limit lines)"
		elif [ -s "$outf" ]; then
			reason="fatal error but a report was printed on stdout ($(wc -c < "$outf") bytes)"
		fi
	elif [[ $name != usage-* ]] && grep -Eqi 'usage:' "$err"; then
		reason="usage text printed for a bad input"
	fi
	if [ -z "$reason" ]; then
		echo "ok $total $name (exit $rc)"
	else
		echo "not ok $total $name - $reason"
		failed=$((failed + 1))
	fi
	if [ -s "$err" ]; then
		head -n 3 "$err" | sed 's/^/#   stderr: /'
	fi
}

# run_case NAME EXPECTED ARGS...: report ARGS with stdin from /dev/null
run_case() {
	local name=$1 expected=$2
	shift 2
	timeout "$hang" "$PERF" refleak report "$@" < /dev/null > "$out/$name.out" 2> "$out/$name.err"
	check "$name" $? "$expected" "$out/$name.err" "$out/$name.out"
}

# run_stdin NAME EXPECTED FILE ARGS...: report -i - ARGS with stdin from FILE
# cut_said <name> <yes|no>: whether the report of case <name> says in its
# header that the recording was cut short
cut_said() {
	local name=$1 want=$2 got=no
	total=$((total + 1))
	grep -q '^# cut short: ' "$out/$name.out" && got=yes
	if [ "$got" = "$want" ]; then
		echo "ok $total $name-cut-short-said ($got)"
	else
		echo "not ok $total $name-cut-short-said - $got, expected $want"
		failed=$((failed + 1))
	fi
}

run_stdin() {
	local name=$1 expected=$2 f=$3
	shift 3
	timeout "$hang" "$PERF" refleak report -i - "$@" < "$f" > "$out/$name.out" 2> "$out/$name.err"
	check "$name" $? "$expected" "$out/$name.err" "$out/$name.out"
}

# ------------------------------------------------------------------ inputs

valid=$work/valid.data
echo "# recording $valid with $PERF refleak record --kmem-only"
if ! timeout "$hang" "${rec_env[@]}" "$PERF" refleak record --kmem-only -o "$valid" --settle 0 -- sleep 0.2 \
	> "$out/record.out" 2> "$out/record.err"; then
	sed 's/^/# /' "$out/record.err" | head -n 10
	cannot_run "perf refleak record --kmem-only failed on this host"
fi
size=$(wc -c < "$valid")
if [ "$size" -lt 1024 ] || [ "$(head -c 8 "$valid")" != "PERFILE2" ]; then
	cannot_run "recording $valid is not a usable perf.data ($size bytes)"
fi
hdr_size=$(u64_at "$valid" 8)
attr_off=$(u64_at "$valid" 24)
data_off=$(u64_at "$valid" 40)
data_size=$(u64_at "$valid" 48)
echo "# valid.data: $size bytes, header $hdr_size, attrs at $attr_off, data $data_off+$data_size"
if [ "$data_size" -lt 256 ] || [ $((data_off + data_size)) -gt "$size" ]; then
	cannot_run "recording has too little data ($data_size bytes) to derive cases from"
fi

# Empty and truncated files.
: > "$work/empty.data"
cut_file "$valid" "$work/cut-magic.data" 8
cut_file "$valid" "$work/cut-header.data" "$hdr_size"
cut_file "$valid" "$work/cut-attrs.data" $((attr_off + 8))
cut_file "$valid" "$work/cut-data-start.data" "$data_off"
cut_file "$valid" "$work/cut-first-event.data" $((data_off + 6))
cut_file "$valid" "$work/cut-mid-data.data" $((data_off + data_size / 2))
cut_file "$valid" "$work/cut-data-end-1.data" $((data_off + data_size - 1))
if [ "$size" -gt $((data_off + data_size + 16)) ]; then
	cut_file "$valid" "$work/cut-features.data" $((data_off + data_size + (size - data_off - data_size) / 2))
fi
# A recording cut short: its header never finished (data size 0), the
# file ending in the middle of the data, or of the tracing data.
cut_file "$valid" "$work/unfinished-mid-data.data" $((data_off + data_size / 2))
write_u64 "$work/unfinished-mid-data.data" 48 0
cut_file "$valid" "$work/unfinished-early.data" $((data_off + 64))
write_u64 "$work/unfinished-early.data" 48 0
# ... and in the middle of a record's header, 3 of its 8 bytes written
cut_file "$valid" "$work/unfinished-mid-header.data" \
	$(( $(record_after "$valid" "$data_off" $((data_off + data_size / 2))) + 3 ))
write_u64 "$work/unfinished-mid-header.data" 48 0

# Corrupted copies.  Random bytes in the data section, fixed seeds.
for seed in 1 2 3 4; do
	f=$work/corrupt-data-seed$seed.data
	cp "$valid" "$f"
	RANDOM=$seed
	for _ in $(seq 64); do
		pos=$(( data_off + ((RANDOM << 15 | RANDOM) % data_size) ))
		write_bytes "$f" "$pos" "$(printf '%02x' $((RANDOM % 256)))" \
			"$(printf '%02x' $((RANDOM % 256)))" "$(printf '%02x' $((RANDOM % 256)))" \
			"$(printf '%02x' $((RANDOM % 256)))"
	done
done
# First event header size 0 (a reader that trusts it never advances): the
# tracing data's record.
cp "$valid" "$work/corrupt-event-size0.data"
write_bytes "$work/corrupt-event-size0.data" $((data_off + 6)) 00 00
# First event header size 0xffff (runs past the record).
cp "$valid" "$work/corrupt-event-size-max.data"
write_bytes "$work/corrupt-event-size-max.data" $((data_off + 6)) ff ff
# Unknown event type in the header of the first event after the tracing
# data (record writes the tracepoints' formats first: 66, its payload's
# size a u32 after the 8-byte header).
first=$data_off
if [ "$(od -A n -t u4 -j "$first" -N 4 "$valid" | tr -d ' ')" = 66 ]; then
	first=$((first + 16 + $(od -A n -t u4 -j $((first + 8)) -N 4 "$valid" | tr -d ' ')))
fi
cp "$valid" "$work/corrupt-event-type.data"
write_bytes "$work/corrupt-event-type.data" "$first" ff ff 00 7f
# Header: data section larger than the file, attr size 0, attrs past the end.
cp "$valid" "$work/corrupt-data-size.data"
write_u64 "$work/corrupt-data-size.data" 48 $((size * 1024))
cp "$valid" "$work/corrupt-attr-size0.data"
write_u64 "$work/corrupt-attr-size0.data" 16 0
cp "$valid" "$work/corrupt-attr-offset.data"
write_u64 "$work/corrupt-attr-offset.data" 24 $((size + 4096))
# Bad magic.
cp "$valid" "$work/corrupt-magic.data"
write_bytes "$work/corrupt-magic.data" 0 58 58 58 58

# Foreign files.
cp /bin/ls "$work/foreign-elf.data"
printf 'this is not a perf.data file\n' > "$work/foreign-text.data"
head -c 4096 /dev/zero > "$work/foreign-zeros.data"
mkdir -p "$work/foreign-dir.data"

# ------------------------------------------------------------------ cases

echo "# fatal inputs: exit 1"
run_case nonexistent 1 -i "$work/does-not-exist.data"
run_case empty 1 -i "$work/empty.data"
for f in "$work"/cut-*.data; do
	run_case "truncated-$(basename "$f" .data)" 1 -i "$f"
done
# a recording cut short is read as far as it goes, and says so
run_case unfinished-mid-data 0 -i "$work/unfinished-mid-data.data"
cut_said unfinished-mid-data yes
run_case unfinished-mid-header 0 -i "$work/unfinished-mid-header.data"
cut_said unfinished-mid-header yes
run_case unfinished-early 1 -i "$work/unfinished-early.data"
for c in corrupt-event-size0 corrupt-event-size-max corrupt-data-size corrupt-attr-size0 \
	 corrupt-attr-offset corrupt-magic; do
	run_case "$c" 1 -i "$work/$c.data"
done
# An unknown record type may come from a newer perf: perf skips it with a
# warning, so the report stands (0) but cannot be fully trusted.
run_case corrupt-event-type 0 -i "$work/corrupt-event-type.data"
for c in foreign-elf foreign-text foreign-zeros foreign-dir; do
	run_case "$c" 1 -i "$work/$c.data"
done

echo "# random corruption: undetectable damage may still parse, as kmem-only (0)"
for seed in 1 2 3 4; do
	run_case "corrupt-data-seed$seed" "1 0" -i "$work/corrupt-data-seed$seed.data"
done

echo "# a symbol file that cannot be read: exit 1"
run_case kallsyms-unreadable 1 -i "$valid" --kallsyms "$work/does-not-exist.kallsyms"
run_case vmlinux-unreadable 1 -i "$valid" -k "$work/does-not-exist.vmlinux"

echo "# usage errors: exit 129 as every perf command (the usage listing may follow)"
run_case usage-unknown-option 129 -i "$valid" --no-such-option
# no subcommand, an unknown one: perf's usage of perf refleak
for sub in none no-such-subcommand; do
	timeout "$hang" "$PERF" refleak ${sub#none} < /dev/null > "$out/usage-sub-$sub.out" \
		2> "$out/usage-sub-$sub.err"
	check "usage-subcommand-$sub" $? 129 "$out/usage-sub-$sub.err" "$out/usage-sub-$sub.out"
done
run_case usage-bad-sort-key 129 -i "$valid" --sort no_such_key
run_case usage-bad-min-age 129 -i "$valid" --min-age not-a-number
run_case usage-bad-time 129 -i "$valid" --time not-a-time

echo "# incomplete recordings: report printed and a warning, exit 0 (4 with --fail-on-leak)"
run_case kmem-only 0 -i "$valid"
run_case kmem-only-json 0 -i "$valid" --json
run_case kmem-only-all-options 0 -i "$valid" --objects -g --sort age,bytes,count,site --min-age 0
# --fail-on-leak: nothing can be classified without final puts, so no leak;
# if the engine reports suspicious objects anyway, 3 would take precedence.
run_case kmem-only-fail-on-leak 4 -i "$valid" --fail-on-leak
if command -v python3 > /dev/null; then
	total=$((total + 1))
	if msg=$(python3 - "$out/kmem-only-json.out" 2>&1 << 'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit("not valid JSON: %s" % e)
s = d.get("summary", {})
ev = s.get("events", {})
errs = []
if d.get("version") != 2: errs.append("version != 2")
for k in ("kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free", "final_put"):
    if not isinstance(ev.get(k), int): errs.append("summary.events.%s missing" % k)
if ev.get("final_put") != 0: errs.append("final_put != 0 in a kmem-only recording")
if sum(ev.get(k, 0) for k in ("kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free")) <= 0:
    errs.append("no kmem event counted")
for k in ("lost_events", "unmatched_final_puts", "inferred_objects", "uncertain_objects", "classes"):
    if k not in s: errs.append("summary.%s missing" % k)
if not isinstance(d.get("findings"), list): errs.append("findings missing")
if errs: sys.exit("; ".join(errs))
EOF
	); then
		echo "ok $total kmem-only-json-shape"
	else
		echo "not ok $total kmem-only-json-shape - $msg"
		failed=$((failed + 1))
	fi
fi

# record --refs: cache names that could break out of the filter, an empty
# list, --kmem-only with it are usage errors (129); a kernel without
# ref_trace:ref_trace_ref (this host's) is one clear fatal message (1).
run_record() {
	local name=$1 expected=$2
	shift 2
	timeout "$hang" "${rec_env[@]}" "$PERF" refleak record "$@" -o "$work/$name.data" -- true \
		< /dev/null > "$out/$name.out" 2> "$out/$name.err"
	check "$name" $? "$expected" "$out/$name.err" "$out/$name.out"
}
run_record usage-refs-quote 129 --refs 'pid" || cache ~ "*'
run_record usage-refs-empty 129 --refs ,
run_record usage-refs-kmem-only 129 --refs pid --kmem-only
if [ -e /sys/kernel/tracing/events/ref_trace/ref_trace_ref ] ||
   [ -e /sys/kernel/debug/tracing/events/ref_trace/ref_trace_ref ]; then
	echo "# this host has ref_trace_ref: the missing-event case is not run"
else
	run_record refs-no-event 1 --refs pid
fi

# A perf without BPF skeletons (the sanitizer build): record -b and top
# say so first, whatever the kernel has or lacks (1).
if "$PERF" version --build-options 2> /dev/null | grep -q 'bpf_skeletons: \[ OFF'; then
	timeout "$hang" "${rec_env[@]}" "$PERF" refleak record -b -o "$work/b.data" -- true \
		< /dev/null > "$out/record-b-no-skel.out" 2> "$out/record-b-no-skel.err"
	check record-b-no-skel $? 1 "$out/record-b-no-skel.err" "$out/record-b-no-skel.out" \
		"BPF skeletons"
	timeout "$hang" "${rec_env[@]}" "$PERF" refleak top -- true \
		< /dev/null > "$out/top-no-skel.out" 2> "$out/top-no-skel.err"
	check top-no-skel $? 1 "$out/top-no-skel.err" "$out/top-no-skel.out" "BPF skeletons"
else
	echo "# $PERF has BPF skeletons: the cases without them are not run"
fi

# Copies of samples: the golden pipe recording with every sample written
# twice is read as the recording itself: each copy counted and dropped,
# the same events and the same count of samples with their CPU's previous
# timestamp (an unstable sched_clock gives a tick's events one timestamp:
# 2,242 of them in this recording, which are not copies).
golden=$(cd "$(dirname "$0")/../golden" && pwd)
if command -v python3 > /dev/null && [ -f "$golden/pipe.data.gz" ]; then
	zcat "$golden/pipe.data.gz" > "$work/pipe.data"
	zcat "$golden/kallsyms.gz" > "$work/kallsyms"
	ndup=$(python3 - "$work/pipe.data" "$work/pipe-dup.data" << 'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
out, pos, n = [data[:16]], 16, 0	# pipe header: magic and its size
while pos + 8 <= len(data):
    typ, misc, size = struct.unpack_from("<IHH", data, pos)
    if size < 8 or pos + size > len(data):
        break
    if typ == 66:			# HEADER_TRACING_DATA: its data follows the record
        size += struct.unpack_from("<I", data, pos + 8)[0]
    rec = data[pos:pos + size]
    out.append(rec)
    if typ == 9:			# PERF_RECORD_SAMPLE
        out.append(rec)
        n += 1
    pos += size
out.append(data[pos:])
open(sys.argv[2], "wb").write(b"".join(out))
print(n)
EOF
	)
	for f in pipe pipe-dup; do
		(cd "$work" && timeout "$hang" "$PERF" refleak report --kallsyms kallsyms -i - --min-age 0 --json \
			< "$f.data" > "$out/$f.json" 2> "$out/$f.err")
		echo $? > "$out/$f.rc"
	done
	total=$((total + 1))
	same0=$(jq '.summary.same_time_samples' "$out/pipe.json" 2>/dev/null)
	same=$(jq '.summary.same_time_samples' "$out/pipe-dup.json" 2>/dev/null)
	copies=$(jq '.summary.copied_samples' "$out/pipe-dup.json" 2>/dev/null)
	ev0=$(jq '[.summary.events[]] | add' "$out/pipe.json" 2>/dev/null)
	ev=$(jq '[.summary.events[]] | add' "$out/pipe-dup.json" 2>/dev/null)
	if [ "$(cat "$out/pipe-dup.rc")" != 0 ] || [ "${ndup:-0}" -le 0 ] || [ -z "$same" ]; then
		echo "not ok $total copied-samples - report exited $(cat "$out/pipe-dup.rc")"
		failed=$((failed + 1))
	elif [ "$copies" != "$ndup" ]; then
		echo "not ok $total copied-samples - $copies copies counted, $ndup written"
		failed=$((failed + 1))
	elif [ "$ev" != "$ev0" ]; then
		echo "not ok $total copied-samples - $ev events read, expected $ev0: copies taken for events"
		failed=$((failed + 1))
	elif [ "$same" != "$same0" ]; then
		echo "not ok $total copied-samples - $same same-time samples, expected $same0"
		failed=$((failed + 1))
	else
		echo "ok $total copied-samples ($ndup samples written twice: $copies copies dropped, $ev events read, $same same-time samples as in the original)"
	fi
fi

# No callchains: a plain perf record of the kmem events.
nocg=$work/no-callchain.data
if timeout "$hang" "${rec_env[@]}" "$PERF" record -a -e "$kmem_events" -o "$nocg" -- sleep 0.2 \
	> /dev/null 2> "$out/record-nocg.err"; then
	run_case no-callchain 0 -i "$nocg"
	run_case no-callchain-g 0 -i "$nocg" -g
else
	total=$((total + 1))
	echo "not ok $total no-callchain - perf record -e $kmem_events failed"
	failed=$((failed + 1))
fi

# No callchains, recorded by perf refleak itself.
if timeout "$hang" "${rec_env[@]}" "$PERF" refleak record --kmem-only --no-call-graph --settle 0 -o "$work/refleak-no-callchain.data" \
	-- sleep 0.2 > /dev/null 2> "$out/record-nocg2.err"; then
	run_case refleak-no-callchain 0 -i "$work/refleak-no-callchain.data"
	run_case refleak-no-callchain-g 0 -i "$work/refleak-no-callchain.data" -g --json
else
	total=$((total + 1))
	echo "not ok $total refleak-no-callchain - perf refleak record --kmem-only --no-call-graph failed"
	failed=$((failed + 1))
fi

# A valid perf.data without any refleak event.
other=$work/no-kmem-events.data
if timeout "$hang" "${rec_env[@]}" "$PERF" record -e task-clock -o "$other" -- sleep 0.2 \
	> /dev/null 2> "$out/record-other.err"; then
	run_case no-kmem-events 1 -i "$other"
else
	total=$((total + 1))
	echo "not ok $total no-kmem-events - perf record -e task-clock failed"
	failed=$((failed + 1))
fi

echo "# pipe mode"
pipe=$work/pipe.data
timeout "$hang" "${rec_env[@]}" "$PERF" refleak record --kmem-only -o - --settle 0 -- sleep 0.2 2> "$out/record-pipe.err" \
	| timeout "$hang" "$PERF" refleak report -i - > "$out/pipe-live.out" 2> "$out/pipe-live.err"
rc=("${PIPESTATUS[@]}")
if [ "${rc[0]}" != 0 ]; then
	total=$((total + 1))
	echo "not ok $total pipe-live - perf refleak record -o - exited ${rc[0]}"
	failed=$((failed + 1))
else
	check pipe-live "${rc[1]}" 0 "$out/pipe-live.err" "$out/pipe-live.out"
fi
if timeout "$hang" "${rec_env[@]}" "$PERF" refleak record --kmem-only -o - --settle 0 -- sleep 0.2 > "$pipe" 2> /dev/null &&
	[ -s "$pipe" ]; then
	psize=$(wc -c < "$pipe")
	run_stdin pipe-file 0 "$pipe"
	cut_said pipe-file no
	# A pipe stream has no size to check against: a cut exactly between
	# two events is undetectable.  Cut inside an event (header or payload)
	# by walking the stream: 16-byte pipe header, then events with a u16
	# size at byte 6 of their header (HEADER_TRACING_DATA and AUXTRACE
	# carry a payload after the event, of the size given in the event).
	mid_hdr=$((psize / 2)) mid_payload=$((psize / 2))
	if command -v python3 > /dev/null; then
		read -r mid_hdr mid_payload < <(python3 - "$pipe" << 'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
off, half = 16, len(b) // 2
while off + 8 <= len(b):
    etype, size = struct.unpack_from("<I2xH", b, off)
    if size < 8:
        break
    if etype == 66:    # PERF_RECORD_HEADER_TRACING_DATA: u32 size
        size += struct.unpack_from("<I", b, off + 8)[0]
    elif etype == 71:  # PERF_RECORD_AUXTRACE: u64 size
        size += struct.unpack_from("<Q", b, off + 8)[0]
    if off + size > half:
        print(off + 4, off + 8 + (size - 8) // 2)
        sys.exit(0)
    off += size
print(half, half)
EOF
		)
	fi
	cut_file "$pipe" "$work/pipe-cut-8.data" 8
	cut_file "$pipe" "$work/pipe-cut-mid-header.data" "$mid_hdr"
	cut_file "$pipe" "$work/pipe-cut-mid-payload.data" "$mid_payload"
	cut_file "$pipe" "$work/pipe-cut-end-3.data" $((psize - 3))
	run_stdin pipe-truncated-8 1 "$work/pipe-cut-8.data"
	# a stream cut after its events began is read as far as it goes
	run_stdin pipe-truncated-mid-header 0 "$work/pipe-cut-mid-header.data"
	cut_said pipe-truncated-mid-header yes
	run_stdin pipe-truncated-mid-payload 0 "$work/pipe-cut-mid-payload.data"
	cut_said pipe-truncated-mid-payload yes
	run_stdin pipe-truncated-end 0 "$work/pipe-cut-end-3.data"
	cut_said pipe-truncated-end yes
	# a pipe stream read as a file
	run_case pipe-stream-as-file "1 0" -i "$pipe"
else
	total=$((total + 1))
	echo "not ok $total pipe-file - perf refleak record -o - > file failed"
	failed=$((failed + 1))
fi
run_stdin pipe-empty 1 /dev/null
run_stdin pipe-foreign-elf 1 /bin/ls
run_stdin pipe-file-format 1 "$valid"

echo "1..$total"
if [ "$failed" = 0 ]; then
	echo "# all $total cases passed"
	exit 0
fi
echo "# $failed of $total cases failed (inputs in $work$([ "$keep" = 0 ] && echo ', removed'))"
exit 1
