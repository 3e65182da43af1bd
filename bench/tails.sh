#!/usr/bin/env bash
# Measures tail strategies before building one: on fresh loop filesystems, per tree, the time
# to materialise the tree (a sync inside each timing) by
#   cp --reflink     cp -a --reflink=always of the extracted tree (whole-file clones)
#   pkg install      pkg itself
#   clone+write      bench/floor -clone: whole blocks cloned from the cache tar, tails written
#                    (what pkg does, without pkg's fixed cost)
#   clone+tailfile   bench/floor -tailfiles: whole blocks cloned from the tar, the partial last
#                    block cloned from a file of its own that ends where the tail ends (a
#                    design that keeps a tail file per member in the cache)
# Files under one block are written by all but cp. A question for XFS: on btrfs pkg clones
# a file's last block whole and truncates it, which btrfs does without copying, and btrfs
# keeps files under 2 KiB inline, which no clone can take from.
#
# Run as root from anywhere:   bench/tails.sh
# Environment: SHAPES="big firmware NAME=ARCHIVE..." (bench/gentree shapes or real archives)
#              FS="xfs"  RUNS=7  WORK=/var/tmp/pkg-tails-bench
# Prints per filesystem and tree the median seconds of each and their ratio to cp.
set -euo pipefail

SHAPES=${SHAPES:-big firmware}
FS=${FS:-xfs}
RUNS=${RUNS:-7}
WORK=${WORK:-/var/tmp/pkg-tails-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"
[ "$(id -u)" = 0 ] || { echo "bench/tails.sh: needs root (mount, mkfs)" >&2; exit 2; }

mkdir -p "$WORK/bin" "$WORK/tars" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/floor" ./bench/floor &&
	go build -o "$WORK/bin/gentree" ./bench/gentree)
pkg=$WORK/bin/pkg floor=$WORK/bin/floor
names=$(benchtars "$WORK" "$WORK/bin/gentree" $SHAPES)

# A run that fails leaves no filesystem mounted.
trap 'for kind in $FS; do umount "$WORK/mnt-$kind" 2>/dev/null && rm -f "$WORK/$kind.img"; done' EXIT
for kind in $FS; do
	d=$WORK/mnt-$kind
	loopfs "$kind" "$WORK/$kind.img" 24G "$d"
	for shape in $names; do
		g="--root $d/r --cache $d/cache --repo $d/repo --quiet"
		$pkg --quiet repo add "$d/repo" "$(ls "$WORK/tars/$shape".* | head -1)" --name "$shape" --version 1 --depends ''
		$pkg $g fetch "$shape"
		aligned=$(ls "$d"/cache/tars/*.tar | head -1)
		mkdir -p "$d/t" && tar -xf "$aligned" -C "$d/t"
		$floor -prepare "$d/tails" "$aligned"
		hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$WORK/results/$kind-$shape.json" \
			-n "cp --reflink" --prepare "rm -rf $d/c" "sh -c 'cp -a --reflink=always $d/t $d/c && sync -f $d/c'" \
			-n "pkg install" --prepare "rm -rf $d/r" "$pkg $g install $shape" \
			-n "clone+write" --prepare "rm -rf $d/f" "$floor -clone -tails $aligned $d/f" \
			-n "clone+tailfile" --prepare "rm -rf $d/f" "$floor -tailfiles $d/tails $aligned $d/f" >/dev/null
		rm -rf "$d/r" "$d/t" "$d/c" "$d/f" "$d/tails" "$d/repo" "$d/cache"
	done
	umount "$d" && rm -f "$WORK/$kind.img"
done

python3 - "$WORK/results" $FS -- $names <<'EOF'
import json, sys
res, rest = sys.argv[1], sys.argv[2:]
sep = rest.index("--")
print("fs     tree       cp --reflink   pkg install    clone+write    clone+tailfile (s, x cp)")
for fs in rest[:sep]:
    for shape in rest[sep + 1:]:
        with open(f"{res}/{fs}-{shape}.json") as f:
            m = {r["command"]: r["median"] for r in json.load(f)["results"]}
        cp = m["cp --reflink"]
        cells = "  ".join(f"{m[k]:.3f} {m[k] / cp:4.2f}x" for k in ("cp --reflink", "pkg install", "clone+write", "clone+tailfile"))
        print(f"{fs:6} {shape:10} {cells}")
EOF
