#!/usr/bin/env bash
# Assemble the tree everything is built from: a git work tree in the cache
# holding the pristine source as its base commit ("pristine"), one commit per
# patch of kernel/series (the last one is branch "kernel-top"), and the
# commits of the perf series: the patches of perf-series/patches/, then
# perf refleak by job, one commit per perf-series/commits/<n>-<job>.txt,
# placing perf-builtin/, Documentation/ and tests/shell/ into tools/perf
# (branch "assembled").
#
# The new commits are made on a private index, without touching the work
# tree; only then is the work tree moved from the old "assembled" commit to
# the new one, so git rewrites just the files that differ and make does not
# rebuild unchanged objects. Prints the tree's path.
. "$(dirname "$0")/lib.sh"

src=$("$TOP/scripts/fetch-source.sh")
stamp=$TREE/.git/refleak-inputs
want=$(inputs_hash kernel/series $(cd "$TOP" && ls kernel/*.patch 2>/dev/null) perf-builtin perf-series Documentation tests/shell scripts/assemble-tree.sh)

# A tree left with local edits (an interrupted 'make realbugs', which
# patches it for a while, holding the build lock) must never be built as
# it is.  While the lock is held, the edits may be that build's own.
if [ -f "$stamp" ] && flock -n "$BUILD_LOCK" true &&
   [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	log "discarding local edits in $TREE"
	git -C "$TREE" checkout -q -f HEAD -- .
fi

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	echo "$TREE"
	exit 0
fi

# Fixed identity and dates: the same inputs give the same commits.
export GIT_COMMITTER_NAME="perf refleak pipeline" GIT_COMMITTER_EMAIL="pipeline@localhost"
export GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"

if ! git -C "$TREE" rev-parse -q --verify pristine >/dev/null 2>&1; then
	rm -rf "$TREE"
	if git -C "$src" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		log "cloning $src (its HEAD is the base)"
		git clone -q --shared --no-checkout "$src" "$TREE"
		git -C "$TREE" config gc.auto 0
		git -C "$TREE" tag pristine "$(git -C "$src" rev-parse HEAD)"
		git -C "$TREE" checkout -q -B assembled pristine
	else
		log "importing $src as the base commit (about a minute)"
		cp -a "$src" "$TREE"
		git -C "$TREE" init -q
		git -C "$TREE" config gc.auto 0
		# Debian's top-level .gitignore ignores everything: -f.
		git -C "$TREE" add -f -A
		GIT_AUTHOR_NAME=Linux GIT_AUTHOR_EMAIL=linux@localhost GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE \
			git -C "$TREE" commit -q -m "Linux $(make -s -C "$TREE" kernelversion 2>/dev/null)"
		git -C "$TREE" tag pristine
		git -C "$TREE" checkout -q -B assembled
	fi
fi

cd "$TREE"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_INDEX_FILE=$tmp/index
git read-tree pristine
parent=$(git rev-parse pristine)

# Commit the current private index with the message in $1.  The patches
# carry no author (make series signs them as whoever runs it): the commits
# of this tree have the pipeline's identity, the committer's.
commit_index() {
	local msg=$1 tree
	tree=$(git write-tree)
	parent=$(GIT_AUTHOR_NAME=$GIT_COMMITTER_NAME GIT_AUTHOR_EMAIL=$GIT_COMMITTER_EMAIL \
		GIT_AUTHOR_DATE=$GIT_COMMITTER_DATE git commit-tree "$tree" -p "$parent" < "$msg")
}

# Apply a patch in mail form (Subject, message, diff) to the index and
# commit it with its subject and message.
commit_patch() {
	git mailinfo "$tmp/msg" "$tmp/patch" < "$1" > "$tmp/info"
	git apply --cached "$tmp/patch" || die "${1#"$TOP"/} does not apply"
	{ sed -n 's/^Subject: //p' "$tmp/info"; echo; cat "$tmp/msg"; } > "$tmp/commit"
	commit_index "$tmp/commit"
}

# 1. the kernel series
if [ -f "$TOP/kernel/series" ]; then
	while read -r p; do
		case $p in ''|'#'*) continue ;; esac
		commit_patch "$TOP/kernel/$p"
	done < "$TOP/kernel/series"
fi

# The last kernel commit: kernel builds depend on the tree up to here only.
kernel_top=$parent

# 2. the perf series: perf-series/patches/ (changes to perf's own util/
# that perf refleak builds on, applied in name order), then perf refleak
# by job.  Each job's commit adds its files (job_files) as they are at
# that commit, the registration lines tagged with it (perf-series/
# registration) and its message (perf-series/commits/<n>-<job>.txt).
# perf-builtin/ holds the files in their final form; a job's .diff
# (perf-series/commits/<n>-<job>.diff) is what it changes in the files of
# the jobs before it, so the state at a commit is the final one with the
# later jobs' diffs taken back.
jobs=(engine builtin use-bpf top man-page shell-tests)
job_files() { # <job>: its files, relative to perf-builtin/
	case $1 in
	engine)		ls util/refleak*.[ch] tests/refleak.c ;;
	builtin)	ls builtin-refleak.c ;;
	use-bpf)	ls util/bpf_refleak.[ch] util/bpf_skel/* ;;
	esac
}
add_file() { # <file in the project> <path in the tree>
	local mode=100644
	[ -x "$1" ] && mode=100755
	git update-index --add --cacheinfo "$mode,$(git hash-object -w "$1"),$2"
}
add_dir() { # <project dir> <tree dir>: every file under it
	(cd "$1" && find . -type f | sort) |
	while read -r f; do add_file "$1/$f" "$2/${f#./}"; done
}
# register <job>: the lines of perf-series/registration tagged with <job>,
# each inserted after its anchor line (registration lines are not diff
# hunks: they survive changes around them).
register() {
	local job= file= after= line
	while IFS=$'\t' read -r key val; do
		case $key in
		job) job=$val ;;
		file) file=tools/perf/$val ;;
		after) after=$(printf '%b' "$val") ;;
		insert)
			[ "$job" = "$1" ] || continue
			line=$(printf '%b' "$val")
			git show ":$file" > "$tmp/reg" 2>/dev/null || die "registration: no $file"
			# already there (an insert may span lines: its first non-empty one)
			grep -qxF -- "$(grep -m1 . <<< "$line")" "$tmp/reg" && continue
			grep -qxF -- "$after" "$tmp/reg" ||
				die "registration: '$after' not found in $file"
			awk -v a="$after" -v l="$line" '{ print } $0 == a && !done { print l; done = 1 }' \
				"$tmp/reg" > "$tmp/reg.new"
			git update-index --cacheinfo "100644,$(git hash-object -w "$tmp/reg.new"),$file"
			;;
		esac
	done < <(grep -v '^#' "$TOP/perf-series/registration")
}
if [ -d "$TOP/perf-builtin" ]; then
	for p in "$TOP"/perf-series/patches/*.patch; do
		[ -f "$p" ] || continue
		commit_patch "$p"
	done
	# the state of perf-builtin/ at each job's commit, from the last back
	state=$tmp/state
	cp -a "$TOP/perf-builtin" "$state"
	for ((n = ${#jobs[@]}; n >= 1; n--)); do
		cp -a "$state" "$tmp/at-$n"
		d=$(ls "$TOP"/perf-series/commits/$n-*.diff 2>/dev/null) || continue
		git -C "$state" apply -R "$d" ||
			die "${d#"$TOP"/} no longer applies to perf-builtin/: see perf-series/README"
	done
	files=()
	for ((n = 1; n <= ${#jobs[@]}; n++)); do
		job=${jobs[n - 1]}
		msg=$(ls "$TOP"/perf-series/commits/$n-"$job".txt) || die "no message for $job"
		files+=($(cd "$tmp/at-$n" && job_files "$job"))
		for f in "${files[@]}"; do
			add_file "$tmp/at-$n/$f" "tools/perf/$f"
		done
		case $job in
		man-page)	add_dir "$TOP/Documentation" tools/perf/Documentation ;;
		shell-tests)	add_dir "$TOP/tests/shell" tools/perf/tests/shell ;;
		esac
		register "$job"
		commit_index "$msg"
	done
fi

unset GIT_INDEX_FILE
git update-index -q --refresh >/dev/null || true
git checkout -q -B assembled "$parent" || die "could not move the work tree to the new assembly (local edits in $TREE?)"
git update-ref refs/heads/kernel-top "$kernel_top"
echo "$want" > "$stamp"
log "assembled $(git rev-list --count pristine..assembled) commits on top of pristine"
echo "$TREE"
