#!/usr/bin/env bash
# Times pkg remove of installed trees on fresh loop-mounted filesystems against rm -rf of the
# same tree pkg installed (moved out of the root, its record removed first) and rm -rf of a
# cp -a --reflink=always copy of the extracted tree, in alternating rounds, a sync of the
# filesystem inside each timing (pkg syncs itself). With PKG_A, another pkg binary is timed
# in each round too: to compare a change to the remove path with the build before it.
#
# Run as root from anywhere:   bench/remove.sh
# Environment: TREES="kernel" (bench/gentree shapes, or NAME=ARCHIVE: a real archive pkg reads,
#              e.g. go=golang-1.19-go_1.19.8-2_amd64.deb from apt-get download)
#              FS="xfs btrfs"  ROUNDS=5  PKG_A=  NICE=  WORK=/var/tmp/pkg-bench
#              NICE="nice -n -10" runs every timed command at that priority, all alike: on a
#              machine others load, it keeps their processes from setting the figures.
# Prints each command's median and every round's time in ms, and the load at the start and end.
set -euo pipefail

TREES=${TREES:-kernel}
FS=${FS:-xfs btrfs}
ROUNDS=${ROUNDS:-5}
WORK=${WORK:-/var/tmp/pkg-bench}
NICE=${NICE:-}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"
[ "$(id -u)" = 0 ] || { echo "bench/remove.sh: needs root (mount, mkfs)" >&2; exit 2; }
[ -z "${PKG_A:-}" ] || [ -x "$PKG_A" ] || { echo "bench/remove.sh: PKG_A=$PKG_A is not an executable" >&2; exit 2; }

mkdir -p "$WORK/bin" "$WORK/tars"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/gentree" ./bench/gentree)
pkg=$WORK/bin/pkg
names=
for spec in $TREES; do
	case $spec in
	*=*) ln -sf "$(realpath "${spec#*=}")" "$WORK/tars/${spec%%=*}.${spec##*.}" ;;
	*) [ -s "$WORK/tars/$spec.tar" ] || "$WORK/bin/gentree" -shape "$spec" > "$WORK/tars/$spec.tar" ;;
	esac
	names="$names ${spec%%=*}"
done

mnt=$WORK/mnt-remove
trap 'umount "$mnt" 2>/dev/null || true; rm -f "$WORK"/remove-*.img' EXIT
ms() { echo $(($(date +%s%N) / 1000000)); }
# timed LABEL COMMAND: runs COMMAND, then a sync of the filesystem, and prints LABEL and the ms.
timed() {
	local start
	start=$(ms)
	$NICE sh -c "$2 && sync -f '$mnt'"
	echo "$1 $(($(ms) - start))"
}
echo "load at the start: $(uptime)"
for kind in $FS; do
	loopfs "$kind" "$WORK/remove-$kind.img" 24G "$mnt"
	for name in $names; do
		g="--root $mnt/r --cache $mnt/cache --repo $mnt/repo --quiet"
		"$pkg" --quiet repo add "$mnt/repo" "$(ls "$WORK/tars/$name".* | head -1)" --name "$name" --version 1 --depends ''
		"$pkg" $g fetch "$name"
		mkdir -p "$mnt/t" && tar -xf "$(ls "$mnt"/cache/tars/*.tar | head -1)" -C "$mnt/t"
		for i in $(seq "$ROUNDS"); do
			for b in $pkg ${PKG_A:-}; do
				"$b" $g install "$name" && sync -f "$mnt"
				timed "$b" "'$b' $g remove $name"
			done
			"$pkg" $g install "$name" && mv "$mnt/r/pkgs/$name" "$mnt/pt"
			# A folded directory is in the prefix, an empty placeholder in the tree: put it back.
			(cd "$mnt/pt" && find . -mindepth 1 -type d -empty) | while read -r p; do
				if [ -d "$mnt/r/$p" ]; then rmdir "$mnt/pt/$p" && mv "$mnt/r/$p" "$mnt/pt/$p"; fi
			done
			"$pkg" $g remove "$name" && sync -f "$mnt"
			timed "rm-rf-of-pkg's-tree" "rm -rf '$mnt/pt'"
			cp -a --reflink=always "$mnt/t" "$mnt/c" && sync -f "$mnt"
			timed "rm-rf-of-a-reflinked-copy" "rm -rf '$mnt/c'"
		done | python3 -c '
import collections, statistics, sys
kind, name = sys.argv[1:]
times = collections.defaultdict(list)
for line in sys.stdin:
    label, t = line.rsplit(" ", 1)
    times[label].append(int(t))
for label, ts in times.items():
    print(f"{kind:6} {name:10} {label:40} median {statistics.median(ts):7.0f} ms   rounds: {ts}")
' "$kind" "$name"
		rm -rf "$mnt/r" "$mnt/t" "$mnt/repo" "$mnt/cache"
	done
	umount "$mnt"
	rm -f "$WORK/remove-$kind.img"
done
echo "load at the end: $(uptime)"
