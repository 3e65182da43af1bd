"""Prints the medians of bench/install.sh's hyperfine results as a table.

Where the run had the shape "one" (a one-file tree) on a filesystem, each tree there also
gets "at cp's pace": cp's time plus what pkg takes beyond cp for that one file (start, index,
database, commit): what pkg would take if its work per file were cp's, and its ratio
to cp; likewise for remove against rm -rf.

usage: table.py RESULTS_DIR FS... -- SHAPE...
"""
import json
import math
import os
import re
import sys


def medians(path):
    with open(path) as f:
        return {r["command"]: r["median"] for r in json.load(f)["results"]}


def strace_per_file(path, files):
    with open(path) as f:
        m = re.search(r"^\s*100\.00\s+\S+\s+\S+\s+(\d+)", f.read(), re.M)
    return int(m.group(1)) / files if m else float("nan")


def rss(path):
    with open(path) as f:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", f.read())
    return int(m.group(1)) / 1024 if m else float("nan")


def pace(base, fixed):
    """base plus pkg's fixed cost, and its ratio to base; blank without a one-file run."""
    if math.isnan(fixed):
        return ""
    return f"{base + fixed:.3f} ({(base + fixed) / base:.2f}x)"


def main():
    results, rest = sys.argv[1], sys.argv[2:]
    sep = rest.index("--")
    fss, shapes = rest[:sep], rest[sep + 1:]
    cols = ["pkg install", "tar -xf", "cp --reflink", "empty floor", "irreducible floor"]
    print("| fs | shape | " + " | ".join(cols) + " | pkg/floor | pkg/cp | at cp's pace | pkg remove | rm -rf | remove at rm's pace | df growth | syscalls/file | peak RSS |")
    print("|" + "---|" * (len(cols) + 11))
    for fs in fss:
        one = os.path.join(results, f"{fs}-one")
        fixed = rmfixed = float("nan")
        if "one" in shapes and os.path.exists(one + "-install.json"):
            t, r = medians(one + "-install.json"), medians(one + "-remove.json")
            fixed, rmfixed = t["pkg install"] - t["cp --reflink"], r["pkg remove"] - r["rm -rf"]
        for shape in shapes:
            base = os.path.join(results, f"{fs}-{shape}")
            if not os.path.exists(base + "-install.json"):
                continue
            t = medians(base + "-install.json")
            r = medians(base + "-remove.json")
            grown, tree = map(int, open(base + "-df.txt").read().split())
            with open(base + "-files.txt") as f:
                files = int(f.read())
            sc = strace_per_file(base + "-strace.txt", files) if os.path.exists(base + "-strace.txt") else float("nan")
            mem = rss(base + "-time.txt") if os.path.exists(base + "-time.txt") else float("nan")
            row = [f"{t[c]:.3f}" for c in cols]
            cp, rm = t["cp --reflink"], r["rm -rf"]
            row.append(f"{t['pkg install'] / t['irreducible floor']:.2f}x")
            row += [f"{t['pkg install'] / cp:.2f}x", pace(cp, fixed)]
            row += [f"{r['pkg remove']:.3f}", f"{rm:.3f}", pace(rm, rmfixed)]
            row += [f"{100 * grown / tree:.2f}%", f"{sc:.2f}", f"{mem:.0f} MiB"]
            print(f"| {fs} | {shape} | " + " | ".join(row) + " |")
    print("\nseconds, medians; df growth is the used space an install added, as a share of the tree's bytes;")
    print("at cp's (rm's) pace: cp's (rm -rf's) time plus pkg's beyond it on the one-file tree, and its ratio")


main()
