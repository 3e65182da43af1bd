#!/usr/bin/env bash
# Times a one-file install into a root that holds a small package and into one that holds
# the kernel tree (bench/gentree -shape kernel), on loop-mounted XFS and btrfs: the merged
# prefix's cost must follow the change, not the root (issue #32: within 2x).
#
# Run as root from anywhere:   bench/prefix.sh
# Environment: FS="xfs btrfs"  RUNS=10  WORK=/var/tmp/pkg-bench
# Results: a line per filesystem on stdout, hyperfine JSON under $WORK/results.
set -euo pipefail

FS=${FS:-xfs btrfs}
RUNS=${RUNS:-10}
WORK=${WORK:-/var/tmp/pkg-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"

[ "$(id -u)" = 0 ] || { echo "bench/prefix.sh: needs root (mount, mkfs)" >&2; exit 2; }
mkdir -p "$WORK/bin" "$WORK/tars" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/gentree" ./bench/gentree)
pkg=$WORK/bin/pkg
benchtars "$WORK" "$WORK/bin/gentree" kernel >/dev/null
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
for n in one seed; do
	mkdir -p "$src/$n/share/$n" && echo "$n" >"$src/$n/share/$n/file"
	tar -C "$src/$n" -cf "$src/$n.tar" share
done

for kind in $FS; do
	d=$WORK/mnt-$kind
	loopfs "$kind" "$WORK/$kind.img" 24G "$d"
	for n in one seed; do $pkg --quiet repo add "$d/repo" "$src/$n.tar" --name "$n" --version 1; done
	$pkg --quiet repo add "$d/repo" "$WORK/tars/kernel.tar" --name kernel --version 1
	for r in small big; do
		g="--root $d/$r --cache $d/cache --repo $d/repo --quiet"
		$pkg $g install seed
		[ $r = big ] && $pkg $g install kernel
		$pkg $g fetch one
		hyperfine -N --style none --warmup 2 --runs "$RUNS" --export-json "$WORK/results/$kind-one-into-$r.json" \
			--prepare "sh -c '$pkg $g remove one >/dev/null 2>&1 || true; sync -f $d'" "$pkg $g install one" >/dev/null
	done
	python3 - "$WORK/results/$kind-one-into-small.json" "$WORK/results/$kind-one-into-big.json" "$kind" <<'PY'
import json, sys
m = [json.load(open(p))["results"][0] for p in sys.argv[1:3]]
print("%s: one file into a root of one small package %.1f ms (median, sd %.1f), into a root holding the kernel tree %.1f ms (sd %.1f): %.2fx"
      % (sys.argv[3], m[0]["median"] * 1e3, m[0]["stddev"] * 1e3, m[1]["median"] * 1e3, m[1]["stddev"] * 1e3, m[1]["median"] / m[0]["median"]))
PY
	umount "$d" && rm -f "$WORK/$kind.img"
done
