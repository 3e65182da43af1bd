#!/usr/bin/env bash
# Times pkg remove of the kernel-shaped tree (80,000 files) on a fresh loop-mounted XFS,
# alternating two pkg binaries round by round, a sync inside each timing: to compare a
# change to the remove path with the build before it.
#
# With BASELINE=1 it also times, in each round, rm -rf of pkg's installed tree (moved out
# of the root) and rm -rf of a cp -a --reflink=always copy of the extracted tree: the tree's
# shape, not the removal, sets the difference between pkg remove and rm -rf of a copy.
#
# Run as root from anywhere:   PKG_A=/path/old/pkg bench/remove.sh
# Environment: PKG_A (the other binary; optional with BASELINE=1), ROUNDS=4, BASELINE=0,
# WORK=/var/tmp/pkg-bench (bench/install.sh makes $WORK/tars/kernel.tar; so does this).
set -euo pipefail

ROUNDS=${ROUNDS:-4}
WORK=${WORK:-/var/tmp/pkg-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "bench/remove.sh: needs root (mount, mkfs)" >&2; exit 2; }
BASELINE=${BASELINE:-0}
[ -x "${PKG_A:-}" ] || [ "$BASELINE" = 1 ] || { echo "bench/remove.sh: set PKG_A to the pkg binary to compare with, or BASELINE=1" >&2; exit 2; }

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
if [ "$BASELINE" = 1 ]; then
	mkdir -p "$mnt/t" && tar -xf "$(ls "$mnt"/cache/tars/*.tar | head -1)" -C "$mnt/t"
fi
sync
timed() { # timed LABEL COMMAND: runs COMMAND and a sync of the filesystem, timed
	/usr/bin/time -f "round $i $1: %e s (user %U s, system %S s)" sh -c "$2 && sync -f '$mnt'"
}
for i in $(seq "$ROUNDS"); do
	for b in ${PKG_A:-} "$WORK/bin/pkg"; do
		"$b" $g install kernel 2>/dev/null
		sync -f "$mnt"
		timed "$b remove" "'$b' $g remove kernel 2>/dev/null"
	done
	if [ "$BASELINE" = 1 ]; then
		"$WORK/bin/pkg" $g install kernel 2>/dev/null
		mv "$mnt/r/pkgs/kernel" "$mnt/pt" && "$WORK/bin/pkg" $g remove kernel 2>/dev/null || true
		sync -f "$mnt"
		timed "rm -rf of pkg's tree" "rm -rf '$mnt/pt'"
		cp -a --reflink=always "$mnt/t" "$mnt/c" && sync -f "$mnt"
		timed "rm -rf of a reflinked copy" "rm -rf '$mnt/c'"
	fi
done
