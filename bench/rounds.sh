#!/usr/bin/env bash
# Times pkg install of one real archive's tree by several builds of pkg against
# `cp -a --reflink=always` + `sync -f` of the same tree, in alternating rounds on a fresh loop
# filesystem: what bench/install.sh measures, but round by round, so that a change's effect
# shows beside the machine's noise.
#
# Run as root from anywhere:   bench/rounds.sh ROUNDS PKG...
# Environment: ARCHIVE=/var/tmp/linux-source-6.1.tar.xz (the tree: any archive pkg repo add
#              takes)  FS=btrfs (xfs or btrfs)  WORK=/var/tmp/pkg-rounds  SIZE=24G (the image)
#              SHARE=1: the builds after the first use the first one's cache and repository
#              KEEP=1: leave the filesystem mounted at WORK/mnt after the rounds
# Each build gets its own repository and cache (fetched once, untimed). Each round removes
# the installed tree and syncs the filesystem, then times `pkg install` (which syncs itself)
# or `cp -a --reflink=always` of the tree extracted from the cache's tar and `sync -f`, for
# each build in turn and then cp. A round prints, per command (v1, v2... the builds in the
# order given, then cp), seconds/system+user CPU seconds/MiB written to the loop device.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: bench/rounds.sh ROUNDS PKG..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/rounds.sh: needs root (mount, mkfs)" >&2; exit 2; }
rounds=$1
shift
ARCHIVE=${ARCHIVE:-/var/tmp/linux-source-6.1.tar.xz}
FS=${FS:-btrfs}
WORK=${WORK:-/var/tmp/pkg-rounds}
[ -s "$ARCHIVE" ] || { echo "bench/rounds.sh: $ARCHIVE: no such archive (set ARCHIVE)" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"
mkdir -p "$WORK"
d=$WORK/mnt img=$WORK/$FS.img tm=$WORK/time
loopfs "$FS" "$img" "${SIZE:-24G}" "$d"
cleanup() { [ -n "${KEEP:-}" ] || { umount "$d"; rm -f "$img"; }; }
trap cleanup EXIT

i=0
for pkg in "$@"; do
	i=$((i + 1))
	mkdir -p "$d/v$i"
	if [ -n "${SHARE:-}" ] && [ $i -gt 1 ]; then
		ln -s "$d/v1/cache" "$d/v$i/cache"
		ln -s "$d/v1/repo" "$d/v$i/repo"
		continue
	fi
	"$pkg" --quiet repo add "$d/v$i/repo" "$ARCHIVE" --name tree --version 1 --depends '' >/dev/null
	"$pkg" --quiet --root "$d/v$i/r" --cache "$d/v$i/cache" --repo "$d/v$i/repo" fetch tree
done
tar -xf "$(ls "$d"/v1/cache/tars/*.tar | head -1)" -C "$(mkdir -p "$d/t" && echo "$d/t")"
dev=$(basename "$(findmnt -no SOURCE "$d")")
written() { awk '{ print $7 }' "/sys/block/$dev/stat"; } # sectors

for r in $(seq "$rounds"); do
	line="round $r:"
	i=0
	for pkg in "$@" cp; do
		i=$((i + 1))
		if [ "$pkg" = cp ]; then
			rm -rf "$d/c" && sync -f "$d"
			w0=$(written) t0=$EPOCHREALTIME
			/usr/bin/time -f "%S+%U" -o "$tm" sh -c "cp -a --reflink=always '$d/t' '$d/c' && sync -f '$d/c'"
		else
			rm -rf "$d/v$i/r" && sync -f "$d"
			w0=$(written) t0=$EPOCHREALTIME
			/usr/bin/time -f "%S+%U" -o "$tm" "$pkg" --quiet --root "$d/v$i/r" --cache "$d/v$i/cache" --repo "$d/v$i/repo" install tree
		fi
		t1=$EPOCHREALTIME w1=$(written)
		label=v$i
		[ "$pkg" != cp ] || label=cp
		line="$line $label=$(python3 -c "print(f'{$t1 - $t0:.3f}')")/$(cat "$tm")/$(((w1 - w0) / 2048))M"
	done
	echo "$line"
done
