#!/usr/bin/env bash
# Assemble the tree everything is built from: a git work tree in the cache
# holding the pristine source as its base commit ("pristine"), one commit per
# patch of kernel/series (the last one is branch "kernel-top"), and the
# commits of the perf series: the patches of perf-builtin/patches/, then
# four placing perf-builtin/, Documentation/ and tests/shell/ into
# tools/perf (branch "assembled").
#
# The new commits are made on a private index, without touching the work
# tree; only then is the work tree moved from the old "assembled" commit to
# the new one, so git rewrites just the files that differ and make does not
# rebuild unchanged objects. Prints the tree's path.
. "$(dirname "$0")/lib.sh"

src=$("$TOP/scripts/fetch-source.sh")
stamp=$TREE/.git/refleak-inputs
want=$(inputs_hash kernel/series $(cd "$TOP" && ls kernel/*.patch 2>/dev/null) perf-builtin Documentation tests/shell scripts/assemble-tree.sh)

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

# 2. the perf series: perf-builtin/patches/, then perf refleak in four
# commits: the engine and its perf test, the builtin, the man page, the
# shell tests.
add_file() { # <file in the project> <path in the tree>
	local mode=100644
	[ -x "$1" ] && mode=100755
	git update-index --add --cacheinfo "$mode,$(git hash-object -w "$1"),$2"
}
add_dir() { # <project dir> <tree dir> [find predicates]: every file under it
	local src=$1 dst=$2
	shift 2
	(cd "$src" && find . -type f ! -name UPSTREAM "$@" | sort) |
	while read -r f; do add_file "$src/$f" "$dst/${f#./}"; done
}
# register <ERE>: the lines of perf-builtin/registration for the files
# matching <ERE>, each inserted after its anchor line (registration lines
# are not diff hunks: they survive changes around them).
register() {
	local file= after= line
	while IFS=$'\t' read -r key val; do
		case $key in
		file) file=tools/perf/$val ;;
		after) after=$(printf '%b' "$val") ;;
		insert)
			[[ $file =~ $1 ]] || continue
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
	done < <(grep -v '^#' "$TOP/perf-builtin/registration")
}
perf_commit() { # <message file of perf-builtin/commits/>
	commit_index "$TOP/perf-builtin/commits/$1"
}
if [ -d "$TOP/perf-builtin" ]; then
	# changes to perf's own util/ that perf refleak builds on, first, as
	# patches (perf-builtin/patches/, applied in name order)
	for p in "$TOP"/perf-builtin/patches/*.patch; do
		[ -f "$p" ] || continue
		commit_patch "$p"
	done
	add_dir "$TOP/perf-builtin/util" tools/perf/util
	add_dir "$TOP/perf-builtin/tests" tools/perf/tests
	register '^tools/perf/(util|tests)/'
	perf_commit 1-engine.txt
	add_dir "$TOP/perf-builtin" tools/perf -maxdepth 1 -name '*.c'
	register '^tools/perf/[^/]+$'
	perf_commit 2-builtin.txt
	add_dir "$TOP/Documentation" tools/perf/Documentation
	register '^tools/perf/Documentation/'
	perf_commit 3-man-page.txt
	add_dir "$TOP/tests/shell" tools/perf/tests/shell
	perf_commit 4-shell-tests.txt
fi

unset GIT_INDEX_FILE
git update-index -q --refresh >/dev/null || true
git checkout -q -B assembled "$parent" || die "could not move the work tree to the new assembly (local edits in $TREE?)"
git update-ref refs/heads/kernel-top "$kernel_top"
echo "$want" > "$stamp"
log "assembled $(git rev-list --count pristine..assembled) commits on top of pristine"
echo "$TREE"
