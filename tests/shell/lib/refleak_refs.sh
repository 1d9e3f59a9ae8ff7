#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What the perf refleak tests of the references never put share: the
# driver's error path (lib/test_refleak.c) leaks 6 objects of
# test_refleak_refs, each holding the reference its lookup took.

# The report's rows of that cache and its lists of references never put:
# "row <class> <count>" and "list <objects> <certain> <frame1> <frame2>"
refleak_refs_summary() { # <report --max-stack 2 output>
	awk '/^[a-z_]+ \[(definite|likely|possible)\]:/ { cls = $1 }
		$5 == "test_refleak_refs" { print "row", cls, $1 }
		/reference.* each never put/ { n = $1; c = ($0 ~ /taken at:$/); f = 0; next }
		n && /^            [^ ]/ {
			fr[++f] = $1
			if (f == 2) { print "list", n, c, fr[1], fr[2]; n = 0 }
		}' "$1"
}

# true when a summary has one likely_leak row of 6 objects, each naming the
# lookup's get (test_refleak_get under test_refleak_use) alone, certain
refleak_refs_named() { # <summary>
	awk '$1 == "row" { rows++; if ($2 != "likely_leak" || $3 != 6) bad = 1 }
		$1 == "list" {
			objs += $2
			if (!$3 || $4 !~ /^test_refleak_get[.+]/) bad = 1
			if ($5 !~ /^test_refleak_use[.+]/) bad = 1
		}
		END { exit bad || rows != 1 || objs != 6 }' "$1"
}
