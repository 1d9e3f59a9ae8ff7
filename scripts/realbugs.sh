#!/usr/bin/env bash
# make realbugs: real upstream reference leaks, reintroduced, found by
# perf refleak.  Each patch of tests/realbugs/ reverses an upstream fix
# (tests/realbugs/README.md); tests/realbugs/cases names the allocation site
# and cache the leaked objects must be reported at, and the get the upstream
# fix added a put for, which the report must name (recorded with --refs).
#
# Builds a second guest kernel: the assembled tree with the patches applied,
# in its own object directory seeded from the regular kernel's (so only the
# patched files and their dependents are compiled), then restores the tree.
# Boots both kernels with guest/realbugs.sh, which triggers every case N
# times (REALBUGS_N, default 20), and reports on the host.  A case passes
# when the kernel with the bug gives a likely or definite finding at the
# expected site and cache, the kernel without it gives none there, and the
# finding's references never put are as the case's <naming> column says:
# "named", the pairing left only a get made in the expected function, with
# certainty, for every object of the finding; "among-N", that get is one of
# at most N the report lists as possible owners of the missing put; and the
# likely finding holds for the case's <evidence> (owner_exited,
# siblings_died, counter_left, past_last_put) in at least one of its
# objects.  Each case is recorded by 'perf refleak record -b' too, in the
# same run: on both kernels its definite and likely findings (class, tier,
# site, count) must be the plain recording's, and with the bug the get
# named for the case's finding must be the plain recording's, as sure
# ("bpf-<case>"; same_findings() says what count may differ).  -b does not
# follow an object whose counter is born long after its allocation (more
# than its CPU's 32 latest allocations later, in no object followed):
# the cases of bpf_late_births have such objects, whose findings -b may
# lack, and says so.
# Ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"
dir=$TOP/tests/realbugs
n=${REALBUGS_N:-20}
out=$BUILD/realbugs
rbuild=$CACHE/kbuild-realbugs-$KEY

"$TOP/scripts/build-perf.sh" >&2
"$TOP/scripts/build-kernel.sh" >&2
tree=$("$TOP/scripts/assemble-tree.sh")
patches=$(awk '!/^#/ && NF { print $2 }' "$dir/cases" | sort -u)

# Apply, build, restore: under the build lock, and the tree is restored
# whatever happens (a patched tree must never build the regular kernel).
build_buggy() {
	set -e
	restore() { git -C "$tree" checkout -q -f HEAD -- . ; }
	trap restore EXIT
	# timestamps kept: make then compiles only what the patches touch
	rm -rf "$rbuild"
	cp -a "$KBUILD" "$rbuild"
	rm -f "$rbuild/.refleak-built"
	for p in $patches; do
		git -C "$tree" apply "$dir/$p" || { echo "realbugs: $p does not apply" >&2; exit 1; }
	done
	start=$(date +%s)
	make -s -C "$tree" O="$rbuild" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" \
		-j"$JOBS" bzImage >&2
	echo "realbugs: kernel with the bugs built in $(( $(date +%s) - start )) s" >&2
}
export -f build_buggy
export tree rbuild patches dir KBUILD JOBS
flock "$BUILD_LOCK" bash -c build_buggy || die "could not build the kernel with the bugs"
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] || die "tree not restored: $tree"

bins=$("$TOP/scripts/build-guest-bins.sh")
echo "$n" > "$BUILD/realbugs-n"
"$TOP/scripts/make-initramfs.sh" >&2
for k in buggy fixed; do
	img=$BUILD/bzImage
	[ $k = buggy ] && img=$rbuild/arch/x86/boot/bzImage
	BZIMAGE=$img GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800} "$TOP/scripts/run-guest.sh" \
		"$TOP/guest/realbugs.sh" "$out/$k" "$dir/cases" "$BUILD/realbugs-n" $bins >&2 ||
		die "the $k guest failed (see $out/$k/console.log)"
done

# Findings (definite or likely) at <function> in <cache>:
# "count class site cache evidence,..." (the evidence holding for any object)
findings() { # <kernel> <case> <function-alternatives> <cache>
	"$BUILD/perf" refleak report -i "$out/$1/$2.data" --kallsyms "$out/$1/kallsyms" \
		--json > "$out/$1/$2.json" 2> "$out/$1/$2.err"
	"$BUILD/perf" refleak report -i "$out/$1/$2.data" --kallsyms "$out/$1/kallsyms" \
		-g > "$out/$1/$2.txt" 2>&1
	jq -r --arg f "$3" --arg c "$4" '.findings[]
		| select((.site | sub("\\+.*$"; "") | sub("\\..*$"; "")) as $s
			 | ($f | split("|") | index($s)) != null)
		| select(.cache == $c or ($c == "kmalloc" and (.cache | startswith("kmalloc"))))
		| "\(.count) \(.class) \(.site) \(.cache) \(
			[(.evidence // {}) | to_entries[] | select(.value > 0) | .key] | join(",")
			| if . == "" then "-" else . end)"' "$out/$1/$2.json"
}

# a likely finding holds for the expected evidence
evidence_ok() { # <expected> <findings line>
	local evidence
	read -r _ _ _ _ evidence <<< "$2"
	case ",$evidence," in *",$1,"*) return 0 ;; esac
	return 1
}

# "(held by the likely leak at <site>)" when the report says so
held_by() { # <case> <site-alternatives> <cache>
	jq -r --arg f "$2" --arg c "$3" '[.findings[]
		| select((.site | sub("\\+.*$"; "") | sub("\\..*$"; "")) as $s
			 | ($f | split("|") | index($s)) != null)
		| select(.cache == $c or ($c == "kmalloc" and (.cache | startswith("kmalloc"))))
		| .held_by // empty | " (kept alive by the likely leak at \(.site), \(.cache))"]
		| .[0] // ""' "$out/buggy/$1.json"
}

# The get the report names for the finding:
# "named|candidate|none <objects> <gets listed> <frames>", the list naming
# it for the most objects.  The expected function must be one of the get's
# first three frames (below the refcount and tracing machinery), as the
# report's one-line summary shows them (the counting helpers, the driver
# model's kobject_get() and get_device() too, looked past): not a caller
# further down, which the births of the object's other counters may share.
named_get() { # <json> <site-alternatives> <cache> <get-alternatives>
	jq -r --arg f "$2" --arg c "$3" --arg g "$4" '
		def fn: sub("\\+.*$"; "") | sub("\\..*$"; "");
		def user: map(select(test("^(perf_|__perf|trace_|__traceiter|__do_trace_|__ref_trace|ref_trace|refcount_|__refcount|kref_|file_ref_|__file_ref_|rcuref_|__rcuref_)") | not)
			| select(test("^(kobject_get|kobject_put|get_device|put_device)[+.]") | not));
		[.findings[]
		| select((.site | fn) as $s | ($f | split("|") | index($s)) != null)
		| select(.cache == $c or ($c == "kmalloc" and (.cache | startswith("kmalloc"))))
		| (.unput // [])[]
		| . as $u
		| [.gets[] | .frames | user | select(.[0:3] | map(fn) | any(. as $x | $g | split("|") | index($x) != null))]
		| select(length > 0)
		| [(if $u.certain and ($u.gets | length) == 1 then "named" else "candidate" end),
		   $u.objects, ($u.gets | length), (.[0][0:3] | join(" <- "))]]
		| sort_by(.[1]) | reverse | .[0] // ["none", 0, 0, ""] | map(tostring) | join(" ")
		' "$1"
}

# Is the naming what the case expects?  <naming> <named_get line> <objects found>
naming_ok() {
	local how objects gets
	read -r how objects gets _ <<< "$2"
	case $1 in
	named)	[ "$how" = named ] && [ "$objects" = "$3" ] ;;
	among-*) [ "$how" != none ] && [ "$gets" -le "${1#among-}" ] ;;
	*)	return 1 ;;
	esac
}

# "named 20 1 f <- g <- h" as a sentence
naming_text() {
	local how objects gets frames
	read -r how objects gets frames <<< "$1"
	case $how in
	named)	echo "named alone, certain, in $objects objects: $frames" ;;
	none)	echo "not listed" ;;
	*)	echo "one of $gets gets listed (not certain) in $objects objects: $frames" ;;
	esac
}

# "class tier site count" of every definite and likely finding
all_findings() { # <kernel> <recording>
	"$BUILD/perf" refleak report -i "$out/$1/$2.data" --kallsyms "$out/$1/kallsyms" \
		--json 2> "$out/$1/$2.err" |
	jq -r '.findings[] | select(.tier == "definite" or .tier == "likely")
		| "\(.class) \(.tier) \(.site) \(.count)"' | sort
}

# The same findings from both, but for the count of a likely leak by age
# (siblings_died, min-age), which may differ by one object in 20: the -b
# recording ends a little after the plain one inside it.
same_findings() { # <plain findings> <-b findings>
	join -j1 -a1 -a2 -e - -o 0,1.2,2.2 \
		<(awk 'NF { print $1 "/" $2 "/" $3, $4 }' <<< "$1" | sort) \
		<(awk 'NF { print $1 "/" $2 "/" $3, $4 }' <<< "$2" | sort) |
	awk '$2 == "-" || $3 == "-" { bad = 1 }
		$2 != $3 && ($1 !~ /^likely_leak/ || ($2 - $3) * 20 > $2 || ($3 - $2) * 20 > $2) { bad = 1 }
		END { exit bad }'
}

# Cases with objects whose counters are born long after their allocation:
# netdev-bind-phc's net_device queues (register_netdevice() initialises
# their kobjects some 80 allocations after alloc_netdev_mqs() allocated
# them), whose final puts the leaked devices keep unfreed.
bpf_late_births="netdev-bind-phc"

# record -b and the plain recording of the same run: the same findings,
# and the same get named for the case's finding
bpf_same() { # <case> <site-alternatives> <cache> <get-alternatives>
	local k plain bpf lost extra degraded= got want late= missing
	for k in buggy fixed; do
		if [ ! -s "$out/$k/$1-b.data" ]; then
			echo "FAIL bpf-$1: no -b recording on the $k kernel"
			return 1
		fi
		plain=$(all_findings $k "$1") bpf=$(all_findings $k "$1-b")
		lost=$("$BUILD/perf" refleak report -i "$out/$k/$1-b.data" --kallsyms "$out/$k/kallsyms" \
			--json 2> /dev/null | jq -r '.summary.lost_events')
		# Events the kernel side missed make every verdict uncertain: then
		# -b may assert less than the plain recording, never another finding.
		extra=$(comm -23 <(awk 'NF { print $1, $2, $3 }' <<< "$bpf" | sort) \
			<(awk 'NF { print $1, $2, $3 }' <<< "$plain" | sort))
		if [ "${lost:-0}" != 0 ] && [ -z "$extra" ]; then
			degraded="$degraded $lost events missed in the kernel on the $k kernel, every verdict uncertain: $(grep -c . <<< "$bpf") of the $(grep -c . <<< "$plain") definite or likely findings asserted, none the plain recording lacks;"
			continue
		fi
		missing=$(comm -23 <(awk 'NF { print $1, $2, $3 }' <<< "$plain" | sort) \
			<(awk 'NF { print $1, $2, $3 }' <<< "$bpf" | sort))
		if [[ " $bpf_late_births " == *" $1 "* ]] && [ -z "$extra" ] && [ -n "$missing" ]; then
			late="$late on the $k kernel: $(echo $missing);"
			plain=$(grep -v -F -f <(echo "$missing") <<< "$plain")
		fi
		if ! same_findings "$plain" "$bpf"; then
			echo "FAIL bpf-$1: the findings differ on the $k kernel: plain: $(echo $plain); -b: $(echo $bpf)"
			return 1
		fi
	done
	if [ -n "$degraded" ]; then
		echo "PASS bpf-$1: with -b:$degraded"
		return 0
	fi
	"$BUILD/perf" refleak report -i "$out/buggy/$1-b.data" --kallsyms "$out/buggy/kallsyms" \
		--json > "$out/buggy/$1-b.json" 2> /dev/null
	# named or a candidate, and its frames: how many objects, and how many
	# other candidates the pairing lists, vary with the run's timing
	want=$(named_get "$out/buggy/$1.json" "$2" "$3" "$4" | cut -d' ' -f1,4-)
	got=$(named_get "$out/buggy/$1-b.json" "$2" "$3" "$4" | cut -d' ' -f1,4-)
	if [ "$got" != "$want" ]; then
		echo "FAIL bpf-$1: the get named differs: plain: $want; -b: $got"
		return 1
	fi
	echo "PASS bpf-$1: found the same with -b: $(all_findings buggy "$1-b" | wc -l) definite or likely findings with the bug, $(all_findings fixed "$1-b" | wc -l) without, the same get $(cut -d' ' -f1 <<< "$got");" \
		"$(stat -c %s "$out/buggy/$1-b.data") bytes against $(stat -c %s "$out/buggy/$1.data")"
	if [ -n "$late" ]; then
		echo "SKIP bpf-$1-late: -b does not follow objects whose counters are born long after their allocation, the plain recording's findings of them are not compared:$late"
		skipped=$((skipped + 1))
	fi
}

# The finding a case is judged by: the first of the expected evidence, else the first
pick_finding() { # <expected evidence> <findings>
	local line
	while read -r line; do
		[ -n "$line" ] && evidence_ok "$1" "$line" && { echo "$line"; return; }
	done <<< "$2"
	echo "$2" | head -n 1
}

passed=0 failed=0 skipped=0
while read -r name patch site cache _refs get naming evidence _mode; do
	case $name in ''|'#'*) continue ;; esac
	rc=$(cat "$out/buggy/$name.rc" 2>/dev/null)
	if [ "$rc" != 0 ]; then
		echo "FAIL $name: the trigger or the recording failed (exit $rc): $(tail -n 2 "$out/buggy/$name.log")"
		failed=$((failed + 1))
		continue
	fi
	found=$(findings buggy "$name" "$site" "$cache")
	control=$(findings fixed "$name" "$site" "$cache")
	named=$(named_get "$out/buggy/$name.json" "$site" "$cache" "$get")
	first=$(pick_finding "$evidence" "$found")
	count=$(echo "$first" | cut -d' ' -f1)
	if bpf_same "$name" "$site" "$cache" "$get"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	if [ -n "$found" ] && [ -z "$control" ] && naming_ok "$naming" "$named" "$count" &&
	   evidence_ok "$evidence" "$first"; then
		echo "PASS $name: found $first$(held_by "$name" "$site" "$cache") ($patch);" \
			"none without the bug; the reference never put ($get): $(naming_text "$named")"
		passed=$((passed + 1))
	elif [ -n "$found" ] && [ -z "$control" ] && naming_ok "$naming" "$named" "$count"; then
		echo "FAIL $name: found $first, expected evidence $evidence; see $out/buggy/$name.txt"
		failed=$((failed + 1))
	elif [ -n "$found" ] && [ -z "$control" ]; then
		echo "FAIL $name: found $first, but the get in $get is $(naming_text "$named"), expected $naming (record --refs); see $out/buggy/$name.txt"
		failed=$((failed + 1))
	elif [ -z "$found" ]; then
		echo "FAIL $name: no definite or likely finding at $site ($cache); see $out/buggy/$name.txt"
		head -n 12 "$out/buggy/$name.txt" | sed 's/^/    /'
		failed=$((failed + 1))
	else
		echo "FAIL $name: found $first, but also without the bug: $control"
		failed=$((failed + 1))
	fi
done < "$dir/cases"
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
