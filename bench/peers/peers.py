#!/usr/bin/env python3
"""bench/peers.sh's helper: the tree's lock, the loopback registry, the checks and the table.

  peers.py resolved LOCK BASE OUT        LOCK with each entry's "resolved" set to BASE's tarball
                                         URL (BASE a registry: BASE/NAME/-/BASE-VER.tgz; BASE
                                         ending in "/-/": BASE/FILE.tgz, the loopback layout)
  peers.py tarballs LOCK CACACHE DIR     copies each tarball of LOCK out of npm's cache (found by
                                         its sha512 integrity) to DIR/FILE.tgz, checked
  peers.py registry LOCK DIR WWW URL     a static npm registry under WWW for a plain file server
                                         at URL: WWW/NAME is NAME's packument (every version
                                         the lock has), WWW/-/FILE.tgz its tarballs
  peers.py set LOCK DIR...               the name@version set installed under the DIRs (every
                                         package.json right under node_modules/NAME) against
                                         the lock's; prints "229 of 229" or what differs, exits 1
  peers.py pkglock LOCK PKGLOCK          the same of a pkg lockfile's packages
  peers.py share DIR                     FIEMAP of the regular files under DIR (each inode once):
                                         bytes in extents marked shared; files hard-linked to
                                         files outside DIR (a store) counted apart
  peers.py disk FILE                     the medians of lines "KIB INODES" (FILE, or - for stdin),
                                         each a filesystem's growth by one install: "3.6 MiB,
                                         9,335 inodes"
  peers.py table RESULTS                 the markdown tables of a run's results (bench/peers.sh's
                                         times.txt, notes and labels.json; hyperfine's JSON)

FILE is the package's file name: its name with "/" as "+", "-", its version.
"""
import base64
import collections
import fcntl
import glob
import hashlib
import json
import os
import stat
import statistics
import struct
import sys
import tarfile


def lock_set(lock):
    """The lock's packages: {(name, version): integrity}, from its "packages" (npm 7+)."""
    doc = json.load(open(lock))
    if doc.get("lockfileVersion", 1) < 2:
        sys.exit(f"peers.py: {lock}: lockfileVersion {doc.get('lockfileVersion')}: want 2 or 3")
    out = {}
    for path, p in doc["packages"].items():
        if not path:
            continue
        name = p.get("name") or path.rsplit("node_modules/", 1)[1]
        out[(name, p["version"])] = p["integrity"]
    return out


def file_name(name, version):
    return f"{name.replace('/', '+')}-{version}.tgz"


def resolved(lock, base, out):
    doc = json.load(open(lock))
    for path, p in doc["packages"].items():
        if not path:
            continue
        name = p.get("name") or path.rsplit("node_modules/", 1)[1]
        if base.endswith("/-/"):
            p["resolved"] = base + file_name(name, p["version"])
        else:
            p["resolved"] = f"{base.rstrip('/')}/{name}/-/{name.rsplit('/', 1)[-1]}-{p['version']}.tgz"
    with open(out + ".tmp", "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(out + ".tmp", out)


def sri(data):
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def tarballs(lock, cacache, out):
    os.makedirs(out, exist_ok=True)
    for (name, version), integrity in sorted(lock_set(lock).items()):
        dst = os.path.join(out, file_name(name, version))
        if os.path.exists(dst):
            continue
        algo, b64 = integrity.split("-", 1)
        hexd = base64.b64decode(b64).hex()
        src = os.path.join(cacache, "content-v2", algo, hexd[:2], hexd[2:4], hexd[4:])
        data = open(src, "rb").read()
        if sri(data) != integrity:
            sys.exit(f"peers.py: {name}@{version}: {src}: integrity {sri(data)}, want {integrity}")
        with open(dst + ".tmp", "wb") as f:
            f.write(data)
        os.replace(dst + ".tmp", dst)


def manifest(tgz):
    """package.json of an npm tarball: the first member named */package.json at depth one."""
    with tarfile.open(tgz, "r:gz") as t:
        for m in t:
            parts = m.name.split("/")
            if len(parts) == 2 and parts[1] == "package.json" and m.isfile():
                return json.load(t.extractfile(m))
    sys.exit(f"peers.py: {tgz}: no package.json at the top")


def registry(lock, src, www, url):
    """Packuments with the fields the installers read (npm's abbreviated metadata)."""
    keep = ("name", "version", "dependencies", "optionalDependencies", "peerDependencies",
            "peerDependenciesMeta", "bin", "os", "cpu", "engines", "deprecated")
    byname = collections.defaultdict(dict)
    os.makedirs(os.path.join(www, "-"), exist_ok=True)
    for (name, version), integrity in sorted(lock_set(lock).items()):
        fn = file_name(name, version)
        tgz = os.path.join(src, fn)
        dst = os.path.join(www, "-", fn)
        if not os.path.exists(dst):
            os.link(tgz, dst)
        m = manifest(tgz)
        v = {k: m[k] for k in keep if k in m}
        if isinstance(v.get("bin"), str):
            v["bin"] = {name.rsplit("/", 1)[-1]: v["bin"]}
        if any(s in m.get("scripts", {}) for s in ("preinstall", "install", "postinstall")):
            v["hasInstallScript"] = True
        v["dist"] = {"tarball": url.rstrip("/") + "/-/" + fn, "integrity": integrity,
                     "shasum": hashlib.sha1(open(tgz, "rb").read()).hexdigest()}
        byname[name][version] = v
    for name, versions in byname.items():
        latest = max(versions, key=semver_key)
        doc = {"name": name, "dist-tags": {"latest": latest}, "versions": versions,
               "modified": "2026-01-01T00:00:00.000Z"}
        path = os.path.join(www, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f)


def semver_key(v):
    core = v.split("+")[0].split("-")[0]
    return [int(x) for x in core.split(".")] + [0 if "-" in v.split("+")[0] else 1]


def installed(dirs):
    """{(name, version)} of every package directory under dirs: a directory right under a
    node_modules (or under its @scope) holding a package.json; symlinks are not followed,
    and a directory met twice (hard-linked trees do not make directories twice) counts once."""
    out, seen = set(), set()
    for top in dirs:
        for d, subdirs, files in os.walk(top):
            st = os.stat(d)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            parent = os.path.basename(os.path.dirname(d))
            grand = os.path.basename(os.path.dirname(os.path.dirname(d)))
            under = parent == "node_modules" or (parent.startswith("@") and grand == "node_modules")
            if under and "package.json" in files and not os.path.basename(d).startswith("."):
                try:
                    m = json.load(open(os.path.join(d, "package.json")))
                    out.add((m["name"], m["version"]))
                except (ValueError, KeyError) as e:
                    sys.exit(f"peers.py: {d}/package.json: {e}")
    return out


def check_set(lock, dirs):
    return report(set(lock_set(lock)), installed(dirs))


def report(want, got):
    missing, extra = sorted(want - got), sorted(got - want)
    if not missing and not extra:
        print(f"{len(got)} of {len(want)}")
        return 0
    fmt = lambda s: ", ".join(f"{n}@{v}" for n, v in s[:5]) + (" ..." if len(s) > 5 else "")
    print(f"{len(want & got)} of {len(want)}; missing {len(missing)} ({fmt(missing)}); "
          f"extra {len(extra)} ({fmt(extra)})")
    return 1


def check_pkglock(lock, pkglock):
    """pkg's lockfile's packages against the npm lock's name@version set."""
    want = set(lock_set(lock))
    got = {(p["name"], p["version"]) for p in json.load(open(pkglock))["packages"]}
    return report(want, got)


FS_IOC_FIEMAP = 0xC020660B
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_SHARED = 0x2000
EXTENTS = 64


def fiemap(fd):
    """[(length, flags)] of the file's extents."""
    out, start = [], 0
    while True:
        buf = bytearray(struct.pack("=QQLLLL", start, (1 << 64) - 1, 0, 0, EXTENTS, 0) + b"\0" * 56 * EXTENTS)
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
        n = struct.unpack_from("=L", buf, 20)[0]
        last = None
        for i in range(n):
            logical, _phys, length, _r1, _r2, flags = struct.unpack_from("=QQQQQL", buf, 32 + 56 * i)
            out.append((length, flags))
            last = (logical, length, flags)
        if n == 0 or last[2] & FIEMAP_EXTENT_LAST:
            return out
        start = last[0] + last[1]


def share(top):
    """Each inode under top once: its extents' bytes and those marked shared (reflinked), but
    for an inode with links outside top (a hard link to a store), counted apart: its blocks
    are the store's."""
    inodes = {}
    for d, _, names in os.walk(top):
        for n in names:
            p = os.path.join(d, n)
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode):
                continue
            key = (st.st_dev, st.st_ino)
            if key in inodes:
                inodes[key][0] += 1
            else:
                inodes[key] = [1, st.st_nlink, st.st_size, p]
    size = extents = shared = outside = 0
    for seen, nlink, sz, p in inodes.values():
        size += sz
        if nlink > seen:
            outside += 1
            continue
        fd = os.open(p, os.O_RDONLY)
        try:
            for length, flags in fiemap(fd):
                extents += length
                if flags & FIEMAP_EXTENT_SHARED:
                    shared += length
        finally:
            os.close(fd)
    mib = lambda b: f"{b / 1048576:.1f}"
    text = f"{len(inodes)} files, {mib(size)} MiB: "
    if outside:
        text += f"{outside} hard links to files outside; "
    text += f"{mib(shared)} of {mib(extents)} MiB of extents shared"
    print(json.dumps({"files": len(inodes), "bytes": size, "extent_bytes": extents, "shared_bytes": shared,
                      "linked_outside": outside, "text": text}))


def table(results):
    """results/: times.txt lines "FS PHASE LABEL ROUND SECONDS"; FS.PHASE.LABEL.{df,share,set}."""
    rows = collections.defaultdict(list)
    rounds = collections.defaultdict(dict)  # (fs, phase, label) -> {round: seconds}
    times = os.path.join(results, "times.txt")
    for line in open(times) if os.path.exists(times) else []:
        fs, phase, label, rnd, secs = line.split()
        rows[(fs, phase, label)].append(float(secs))
        rounds[(fs, phase, label)][rnd] = float(secs)

    def med(fs, phase, label):
        t = rows.get((fs, phase, label))
        return f"{statistics.median(t):.3f} s" if t else "-"

    def note(fs, phase, label, what):
        p = os.path.join(results, f"{fs}.{phase}.{label}.{what}")
        return open(p).read().strip() if os.path.exists(p) else ""

    labels = json.load(open(os.path.join(results, "labels.json")))
    for fs in labels["fs"]:
        tree = note(fs, "warm", "npm", "share")
        if tree.startswith("{"):
            t = json.loads(tree)
            print(f"\n{fs}: the tree as npm ci lays it out: {t['files']} files, {t['bytes'] / 1048576:.1f} MiB")
        if "npm" not in labels["parts"]:
            continue
        print(f"\n| {fs}: npm tree | warm | disk | cold (tarballs over HTTP on 127.0.0.1) | installed set against the lock's | FIEMAP of the warm install |")
        print("|---|---:|---:|---:|---|---|")
        for tool, name in labels["npm"].items():
            # A tool that failed says why in place of its figures (pkgdir is pkg's warm store).
            base = tool.removesuffix("dir")
            warm = "-" if base != tool else note(fs, "warm", tool, "why") or med(fs, "warm", tool)
            cold = note(fs, "cold", tool, "why") or (base != tool and note(fs, "warm", base, "why")) or med(fs, "cold", tool)
            sets = "; ".join(x for x in (note(fs, p, tool, "set") for p in ("first", "warm", "last-cold")) if x)
            sh = note(fs, "warm", tool, "share")
            sh = json.loads(sh)["text"] if sh.startswith("{") else sh
            print(f"| {name} | {warm} | {note(fs, 'warm', tool, 'df') or '-'} | {cold} | {sets or '-'} | {sh or '-'} |")
        # Against bun copyfile: the ratio of the medians, and the median and range of the
        # rounds' own ratios (each round's pkg time over the same round's bun time).
        for phase in ("warm", "cold"):
            pkg, bun = rounds.get((fs, phase, "pkg")), rounds.get((fs, phase, "bunc"))
            both = sorted(set(pkg or {}) & set(bun or {}))
            if both:
                r = [pkg[k] / bun[k] for k in both]
                print(f"{fs} {phase}, pkg against bun copyfile: {statistics.median(pkg.values()) / statistics.median(bun.values()):.2f}x "
                      f"the medians; the rounds' ratios median {statistics.median(r):.2f}x, {min(r):.2f}-{max(r):.2f}x ({len(r)} rounds)")
        # What each window wrote to the device and the cache flushes it sent (medians).
        w = writes(results, fs)
        for phase in ("warm", "cold"):
            got = [(t, *w[(phase, t)]) for t in labels["npm"] if (phase, t) in w]
            if got:
                print(f"{fs} {phase}, written to the device by each window (the install and its sync -f; medians, "
                      "bunc and bunh: bun copyfile and hardlink, pkgdir: pkg from a directory): " +
                      ", ".join(f"{t} {mib:.1f} MiB in {fl:.0f} cache flushes" for t, mib, fl in got))
        # Disk, against bun copyfile: the ratio of the medians of the rounds' growth.
        grown = {t: grown_medians(os.path.join(results, f"{fs}.warm.{t}.dfs")) for t in ("pkg", "bunc")}
        if grown["pkg"] and grown["bunc"] and grown["bunc"][0] > 0:
            (pk, pi), (bk, bi) = grown["pkg"], grown["bunc"]
            inodes = f", inodes {pi / bi:.2f}x ({pi:,.0f} against {bi:,.0f})" if bi else ""
            print(f"{fs} disk, pkg against bun copyfile: {pk / bk:.2f}x ({pk:,.0f} against {bk:,.0f} KiB){inodes}")
    for fs in labels["fs"]:
        if "deb" in labels["parts"]:
            print(f"\n| {fs}: {labels['deb_title']} | time | disk |")
            print("|---|---:|---:|")
            for tool, name in labels["deb"].items():
                t = note(fs, "deb", tool, "why") or med(fs, "deb", tool)
                print(f"| {name} | {t} | {note(fs, 'deb', tool, 'df') or '-'} |")
    if "small" in labels["parts"]:
        small(results, labels["fs"])


def writes(results, fs):
    """{(phase, tool): (MiB, flushes)} of the npm windows on fs: the medians of writes.txt's
    lines "FS PHASE TOOL ROUND SECTORS0 FLUSHES0 SECTORS1 FLUSHES1"."""
    path = os.path.join(results, "writes.txt")
    got = collections.defaultdict(list)
    for line in open(path) if os.path.exists(path) else []:
        f, phase, tool, _, s0, f0, s1, f1 = line.split()
        if f == fs and phase in ("warm", "cold"):
            got[(phase, tool)].append(((int(s1) - int(s0)) * 512 / 1048576, int(f1) - int(f0)))
    return {k: (statistics.median(m for m, _ in v), statistics.median(x for _, x in v)) for k, v in got.items()}


def grown_medians(path):
    """The medians of the KiB and the inodes of lines "KIB INODES" (a file, or - for stdin),
    each what one install grew the filesystem by; None for a file missing or empty."""
    if path != "-" and not os.path.exists(path):
        return None
    rows = [line.split() for line in (sys.stdin if path == "-" else open(path)) if line.strip()]
    if not rows:
        return None
    return [statistics.median(int(r[i]) for r in rows) for i in (0, 1)]


def disk(path):
    """The disk column's text of lines "KIB INODES" (grown_medians)."""
    kib, inodes = grown_medians(path)
    # btrfs counts no inodes (statfs's f_files is 0): its column shows the KiB alone.
    print(f"{kib / 1024:.1f} MiB" + (f", {inodes:,.0f} inodes" if inodes else ""))


def small(results, fs_list):
    """The small part's rounds (hyperfine, NAME.ROUND.json; NAME.labels, pkg's first): each
    command's median over all its runs, and the median of the rounds' ratios."""
    def rounds(name):
        out = []
        for path in sorted(glob.glob(os.path.join(results, name + ".*.json"))):
            r = json.load(open(path))["results"]
            out.append({x["command"]: x["times"] for x in r})
        return out

    print("\n| what every command pays | pkg | against | ratio (median of the rounds') |")
    print("|---|---:|---:|---:|")
    rows = [("", "small.version")] + [(fs, f"{fs}.small.{n}") for fs in fs_list for n in ("onefile", "verify")]
    for fs, name in rows:
        rs = [r for r in rounds(name) if len(r) == 2]
        if not rs:
            continue
        a, b = open(os.path.join(results, name + ".labels")).read().splitlines()
        ta = statistics.median(t for r in rs for t in r[a])
        tb = statistics.median(t for r in rs for t in r[b])
        ratio = statistics.median(statistics.median(r[a]) / statistics.median(r[b]) for r in rs)
        ms = lambda t: f"{t * 1000:.1f} ms"
        faster = f", {1 / ratio:.1f}x faster" if ratio < 1 else ""
        print(f"| {fs + ': ' if fs else ''}{a} | {ms(ta)} | {b} {ms(tb)} | {ratio:.2f}x ({len(rs)} rounds{faster}) |")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "resolved":
        resolved(*args)
    elif cmd == "tarballs":
        tarballs(*args)
    elif cmd == "registry":
        registry(*args)
    elif cmd == "set":
        sys.exit(check_set(args[0], args[1:]))
    elif cmd == "pkglock":
        sys.exit(check_pkglock(*args))
    elif cmd == "share":
        share(args[0])
    elif cmd == "disk":
        disk(args[0])
    elif cmd == "table":
        table(args[0])
    else:
        sys.exit(f"peers.py: {cmd}: unknown command")


if __name__ == "__main__":
    main()
