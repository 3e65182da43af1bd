#!/usr/bin/env bash
# Times a one-file install into a root that already holds a big tree (the kernel's sources)
# against the same install into a root that holds nothing else, in alternating rounds on
# fresh loop XFS and btrfs: what a change costs must follow the change, not the root.
#
# Run as root from anywhere:   bench/onefile.sh
# Environment: BIG=kernel (a bench/gentree shape, or NAME=ARCHIVE: a real archive, such as
#              kernel=/var/tmp/linux-source-6.1.tar.xz)  FS="xfs btrfs"  ROUNDS=7
#              WORK=/var/tmp/pkg-onefile  PKG=a built pkg (default: built from this checkout)
# Each round removes the one-file package from both roots (untimed), then installs it into
# each, the two in turn, its order swapped every round. pkg syncs inside the timed window.
# Prints per filesystem the medians and the median of the rounds' ratios (big / empty).
set -euo pipefail

BIG=${BIG:-kernel}
FS=${FS:-xfs btrfs}
ROUNDS=${ROUNDS:-7}
WORK=${WORK:-/var/tmp/pkg-onefile}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"

[ "$(id -u)" = 0 ] || { echo "bench/onefile.sh: needs root (mount, mkfs)" >&2; exit 2; }
mkdir -p "$WORK/bin" "$WORK/tars"
(cd "$top" && go build -o "$WORK/bin/gentree" ./bench/gentree)
if [ -z "${PKG:-}" ]; then
	(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg)
	PKG=$WORK/bin/pkg
fi
big=$(benchtars "$WORK" "$WORK/bin/gentree" "$BIG" | awk '{print $1}')
archive() { ls "$WORK/tars/$1".* | head -1; }
# The one-file package: a path of its own (gentree's "one" shape has the kernel shape's
# first path, which the merged prefix refuses as a conflict).
if [ ! -s "$WORK/tars/one.tar" ]; then
	rm -rf "$WORK/one" && mkdir -p "$WORK/one/onefile"
	head -c $(((1 << 20) + 100)) /dev/urandom >"$WORK/one/onefile/data"
	tar -C "$WORK/one" -cf "$WORK/tars/one.tar" onefile
fi

# now: nanoseconds since the epoch.
now() { date +%s%N; }
# timed ROOT: the seconds one install of "one" into ROOT takes, as "%.4f".
timed() {
	local t0 t1
	t0=$(now)
	$PKG --quiet --root "$1" --cache "$d/cache" --repo "$d/repo" install one || return
	t1=$(now)
	echo "$t0 $t1" | awk '{printf "%.4f", ($2-$1)/1e9}'
}

for kind in $FS; do
	d=$WORK/mnt-$kind
	loopfs "$kind" "$WORK/$kind.img" 24G "$d"
	g="--quiet --cache $d/cache --repo $d/repo"
	$PKG --quiet repo add "$d/repo" "$(archive "$big")" --name "$big" --version 1 --depends '' # alone
	$PKG --quiet repo add "$d/repo" "$(archive one)" --name one --version 1
	$PKG $g fetch "$big" one
	$PKG $g --root "$d/big" install "$big"
	$PKG $g --root "$d/empty" install one # makes the root; removed before each round
	files=$($PKG $g --root "$d/big" list --json | python3 -c 'import json,sys; print(sum(p.get("files",0) for p in json.load(sys.stdin)["packages"]))' 2>/dev/null || echo "?")
	: >"$WORK/$kind.times"
	for r in $(seq "$ROUNDS"); do
		for root in big empty; do
			if $PKG $g --root "$d/$root" list 2>/dev/null | grep -q '^one '; then
				$PKG $g --root "$d/$root" remove one
			fi
		done
		sync -f "$d"
		if [ $((r % 2)) = 1 ]; then
			b=$(timed "$d/big") && e=$(timed "$d/empty")
		else
			e=$(timed "$d/empty") && b=$(timed "$d/big")
		fi
		echo "$b $e" >>"$WORK/$kind.times"
	done
	python3 - "$kind" "$WORK/$kind.times" "$files" <<'PY'
import statistics, sys
kind, path, files = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
b = statistics.median(r[0] for r in rows)
e = statistics.median(r[1] for r in rows)
ratio = statistics.median(r[0] / r[1] for r in rows)
print(f"{kind}: one-file install into a root of {files} files {b*1000:.1f} ms, into an empty root {e*1000:.1f} ms; ratio (median of rounds) {ratio:.2f}x; rounds {len(rows)}")
PY
	umount "$d" && rm -f "$WORK/$kind.img"
done
