# The guest checks' helper, sourced by the run scripts: each check leaves
# <name>.rc (0 pass, 2 skip, other fail) and <name>.log in /out, and the
# host judges them.
res=/out
run() { # <name> <command...>
	name=$1
	shift
	echo "guest-check: $name"
	"$@" > "$res/$name.log" 2>&1
	echo $? > "$res/$name.rc"
	tail -n 5 "$res/$name.log"
}
