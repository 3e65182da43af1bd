#!/usr/bin/env bash
# Times pkg remove of the kernel-shaped tree (80,000 files) on a fresh loop-mounted XFS,
# alternating two pkg binaries round by round, a sync inside each timing: to compare a
# change to the remove path with the build before it.
#
# Run as root from anywhere:   PKG_A=/path/old/pkg bench/remove.sh
# Environment: PKG_A (required: the other binary), ROUNDS=4, WORK=/var/tmp/pkg-bench
# (bench/install.sh makes $WORK/tars/kernel.tar; this script makes it too if missing).
set -euo pipefail

ROUNDS=${ROUNDS:-4}
WORK=${WORK:-/var/tmp/pkg-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/remove.sh: needs root (mount, mkfs)" >&2; exit 2; }
[ -x "${PKG_A:-}" ] || { echo "bench/remove.sh: set PKG_A to the pkg binary to compare with" >&2; exit 2; }

mkdir -p "$WORK/bin" "$WORK/tars"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/gentree" ./bench/gentree)
[ -s "$WORK/tars/kernel.tar" ] || "$WORK/bin/gentree" -shape kernel > "$WORK/tars/kernel.tar"

mnt=$WORK/mnt-remove img=$WORK/remove.img
mkdir -p "$mnt"
umount "$mnt" 2>/dev/null || true
rm -f "$img" && truncate -s 24G "$img" && mkfs.xfs -q -f -m reflink=1 "$img" && mount -o loop "$img" "$mnt"
trap 'umount "$mnt"; rm -f "$img"' EXIT
g="--root $mnt/r --cache $mnt/cache --repo $mnt/repo --quiet"
"$WORK/bin/pkg" --quiet repo add "$mnt/repo" "$WORK/tars/kernel.tar" --name kernel --version 1 2>/dev/null
"$WORK/bin/pkg" $g fetch kernel 2>/dev/null
sync
for i in $(seq "$ROUNDS"); do
	for b in "$PKG_A" "$WORK/bin/pkg"; do
		"$b" $g install kernel 2>/dev/null
		sync -f "$mnt"
		/usr/bin/time -f "round $i $b: %e s (user %U s, system %S s)" sh -c "'$b' $g remove kernel 2>/dev/null && sync -f '$mnt'"
	done
done
