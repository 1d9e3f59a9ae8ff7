#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cross-check a perf refleak text report against the JSON report of the
same recording and options: class counts, tier counts, and every row the
text lists (class, site, cache, count, bytes) must be in the JSON findings.
Two printers of one engine must not disagree.

usage: text-json-crosscheck.py <text report> <json report>
Exit: 0 they agree, 1 they differ (each difference printed)."""
import json
import re
import sys


def main():
    text = open(sys.argv[1]).read().splitlines()
    doc = json.load(open(sys.argv[2]))
    summ = doc["summary"]
    errs = []

    for line in text:
        m = re.match(r"# findings: definite (\d+), likely leaks (\d+); possible (\d+)", line)
        if m:
            got = dict(zip(("definite", "likely", "possible"), map(int, m.groups())))
            if got != summ["tiers"]:
                errs.append(f"tiers: text {got}, json {summ['tiers']}")
        if line.startswith("# objects:"):
            got = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", line[len("# objects:"):])}
            if got != summ["classes"]:
                errs.append(f"classes: text {got}, json {summ['classes']}")

    # rows of each listed class: count bytes age refoff cache site
    findings = {(f["class"], f["site"], f["cache"]): f for f in doc["findings"]}
    cls = None
    rows = 0
    for line in text:
        m = re.match(r"^(\w+) \[(definite|likely|possible)\]: ", line)
        if m:
            cls = m.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+[\d.]+\s+\S+\s+(\S+)\s+(\S+)\s*$", line)
        if cls and m:
            count, nbytes, cache, site = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
            rows += 1
            f = findings.get((cls, site, cache))
            if f is None:
                errs.append(f"{cls} {site} {cache}: listed in the text, not in the JSON findings")
            elif (f["count"], f["bytes"]) != (count, nbytes):
                errs.append(f"{cls} {site} {cache}: text count/bytes {count}/{nbytes}, "
                            f"json {f['count']}/{f['bytes']}")
    for e in errs:
        print(e)
    print(f"{rows} text rows checked, {len(errs)} differences")
    return 1 if errs else 0


sys.exit(main())
