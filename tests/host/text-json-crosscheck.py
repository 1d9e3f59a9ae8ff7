#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cross-check a perf refleak text report against the JSON report of the
same recording and options: class counts, tier counts, and the findings
listed: each row of the text (class, site, cache, count, bytes, RefOff) is
one JSON finding and each JSON finding one row of the text.  Two renderers
of one findings list must not disagree.

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
        # what "no finding" does not cover: the footer's counter types and
        # the header's "cannot show" lines
        if line.startswith("# counters not followed: "):
            got = [t for t in line[len("# counters not followed: "):].split(" (")[0].split(", ")]
            want = summ["counters_not_followed"]
            if got != want:
                errs.append(f"counters not followed: text {got}, json {want}")
        if line.startswith("# objects:"):
            got = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", line[len("# objects:"):])}
            if got != summ["classes"]:
                errs.append(f"classes: text {got}, json {summ['classes']}")

    says = {"final_puts": "# cannot show: final puts",
            "counter_births": "# cannot show: counter births",
            "call_stacks": "# cannot show: call stacks"}
    header = [line for line in text if line.startswith("# cannot show: ")]
    if text and text[0] == "# perf refleak report":
        got = [k for k, v in says.items() if any(h.startswith(v) for h in header)]
        if sorted(got) != sorted(summ["cannot_show"]):
            errs.append(f"cannot show: text {got}, json {summ['cannot_show']}")

    # rows of each listed class: count bytes age refoff cache site
    findings = {}
    for f in doc["findings"]:
        key = (f["class"], f["site"], f["cache"])
        if key in findings:
            errs.append(f"{key}: listed twice in the JSON findings")
        findings[key] = f
    seen = set()
    rows = 0
    listed = []	# (class, site, cache, count, bytes, RefOff) of each row
    m = re.match(r"^# class(.+?)tier", text[0]) if text else None
    if m:
        # -x: "class<sep>tier<sep>count<sep>bytes<sep>age_ms<sep>ref_offset<sep>cache<sep>site"
        for line in text[1:]:
            v = line.split(m.group(1))
            if len(v) == 8:
                listed.append((v[0], v[7], v[6], int(v[2]), int(v[3]), v[5]))
    cls = None
    for line in text:
        m = re.match(r"^(\w+) \[(definite|likely|possible)\]: ", line)
        if m:
            cls = m.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+[\d.]+\s+(\S+)\s+(\S+)\s+(\S+)\s*$", line)
        if cls and m:
            listed.append((cls, m.group(5), m.group(4), int(m.group(1)), int(m.group(2)),
                           m.group(3)))
    for cls, site, cache, count, nbytes, refoff in listed:
        rows += 1
        seen.add((cls, site, cache))
        f = findings.get((cls, site, cache))
        if f is None:
            errs.append(f"{cls} {site} {cache}: listed in the text, not in the JSON findings")
            continue
        if (f["count"], f["bytes"]) != (count, nbytes):
            errs.append(f"{cls} {site} {cache}: text count/bytes {count}/{nbytes}, "
                        f"json {f['count']}/{f['bytes']}")
        # RefOff: the counter's offset, "*" when mixed, "?" unknown; it must
        # not depend on the output options
        got = (-1, False) if refoff == "?" else (int(refoff.rstrip("*"), 16), refoff.endswith("*"))
        want = (f["ref_offset"], f["ref_offset"] >= 0 and f["ref_offset_mixed"])
        if got != want:
            errs.append(f"{cls} {site} {cache}: text RefOff {refoff}, json {want}")
    for key in findings:
        if key not in seen and key[2] != "":
            errs.append(f"{key}: a JSON finding the text does not list")
    for e in errs:
        print(e)
    print(f"{rows} text rows checked against {len(findings)} JSON findings, {len(errs)} differences")
    return 1 if errs else 0


sys.exit(main())
