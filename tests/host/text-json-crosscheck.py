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
    raw = open(sys.argv[1]).read().splitlines()
    # join the "#   " continuation lines of wrapped "# key: ..." lists
    text = []
    for line in raw:
        if line.startswith("#   ") and text and text[-1].startswith("# ") and \
                text[-1].endswith(","):
            text[-1] += " " + line[4:]
        else:
            text.append(line)
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
    # the per-class groups carry the counter offset
    for c, groups in doc.get("classes", {}).items():
        for g in groups:
            f = findings.get((c, g["site"], g["cache"]))
            if f is not None:
                f["ref_offset"] = g["ref_offset"]
                f["ref_offset_mixed"] = g["ref_offset_mixed"]
    cls = None
    rows = 0
    for line in text:
        m = re.match(r"^(\w+) \[(definite|likely|possible)\]: ", line)
        if m:
            cls = m.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+[\d.]+\s+(\S+)\s+(\S+)\s+(\S+)\s*$", line)
        if cls and m:
            count, nbytes, refoff = int(m.group(1)), int(m.group(2)), m.group(3)
            cache, site = m.group(4), m.group(5)
            rows += 1
            f = findings.get((cls, site, cache))
            if f is None:
                errs.append(f"{cls} {site} {cache}: listed in the text, not in the JSON findings")
            elif (f["count"], f["bytes"]) != (count, nbytes):
                errs.append(f"{cls} {site} {cache}: text count/bytes {count}/{nbytes}, "
                            f"json {f['count']}/{f['bytes']}")
            elif "ref_offset" in f:
                # RefOff: the counter's offset, "*" when mixed; must not
                # depend on the output options
                want = "?" if f["ref_offset"] < 0 else \
                    f"0x{f['ref_offset']:x}" + ("*" if f["ref_offset_mixed"] else "")
                if refoff != want:
                    errs.append(f"{cls} {site} {cache}: text RefOff {refoff}, json {want}")
    for e in errs:
        print(e)
    nref = sum(1 for f in findings.values() if "ref_offset" in f)
    print(f"{rows} text rows checked ({nref} findings with their RefOff), {len(errs)} differences")
    return 1 if errs else 0


sys.exit(main())
