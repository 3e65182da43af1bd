#!/usr/bin/env bash
# Times pkg install from a warm cache against GNU tar -xf, cp -a --reflink=always and the two
# floors (files created empty; files created with only the bytes no clone covers), and pkg
# remove against rm -rf, on loop-mounted XFS and btrfs and on the machine's ext4.
#
# Run as root from anywhere:   bench/install.sh
# Environment: SHAPES="kernel firmware big"  FS="xfs btrfs ext4"  RUNS=3  WORK=/var/tmp/pkg-bench
#              A shape is one bench/gentree makes, or NAME=ARCHIVE: a real archive pkg reads
#              (fonts=/var/tmp/fonts-noto-core_20201225-1_all.deb, from apt-get download).
#              STRACE=1 also counts syscalls and peak RSS of one install of each shape.
# Every timed command ends with a sync of its filesystem (pkg syncs itself); each is run once
# to warm up (first writes into a fresh sparse image pay for allocation), then RUNS times.
# Results: a table on stdout, hyperfine JSON under $WORK/results.
set -euo pipefail

SHAPES=${SHAPES:-kernel firmware big}
FS=${FS:-xfs btrfs ext4}
RUNS=${RUNS:-3}
WORK=${WORK:-/var/tmp/pkg-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"

[ "$(id -u)" = 0 ] || { echo "bench/install.sh: needs root (mount, mkfs)" >&2; exit 2; }
for tool in hyperfine mkfs.xfs mkfs.btrfs python3 strace /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench/install.sh: $tool missing (apt-get install hyperfine xfsprogs btrfs-progs strace time)" >&2; exit 2; }
done

mkdir -p "$WORK/bin" "$WORK/tars" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/floor" ./bench/floor &&
	go build -o "$WORK/bin/gentree" ./bench/gentree)
pkg=$WORK/bin/pkg floor=$WORK/bin/floor
names=$(benchtars "$WORK" "$WORK/bin/gentree" $SHAPES)
# archive NAME: the archive of that shape.
archive() { ls "$WORK/tars/$1".* | head -1; }

# mountfs KIND: prints a fresh directory on that filesystem.
mountfs() {
	local kind=$1 mnt=$WORK/mnt-$1
	mkdir -p "$mnt"
	if [ "$kind" = ext4 ]; then
		rm -rf "$mnt" && mkdir -p "$mnt"
	else
		loopfs "$kind" "$WORK/$kind.img" 24G "$mnt" # stdout is this function's answer
	fi
	echo "$mnt"
}

unmountfs() {
	local kind=$1 mnt=$WORK/mnt-$1
	if [ "$kind" = ext4 ]; then rm -rf "$mnt"; else umount "$mnt" && rm -f "$WORK/$kind.img"; fi
}

hf() { # hf NAME ARGS...: hyperfine with the common options, JSON to results/NAME.json
	local name=$1
	shift
	hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$WORK/results/$name.json" "$@" >/dev/null
}

for kind in $FS; do
	d=$(mountfs "$kind")
	reflink=always tails=
	[ "$kind" = ext4 ] && reflink=auto
	[ "$kind" = xfs ] && tails=-tails
	for shape in $names; do
		g="--root $d/r --cache $d/cache --repo $d/repo --quiet"
		# Each tree alone: a .deb's dependencies (--depends '') are not what is measured.
		$pkg --quiet repo add "$d/repo" "$(archive "$shape")" --name "$shape" --version 1 --depends ''
		$pkg $g fetch "$shape"
		aligned=$(ls "$d"/cache/tars/*.tar | head -1)
		mkdir -p "$d/t" && tar -xf "$aligned" -C "$d/t" # the source tree for cp
		find "$d/t" -type f | wc -l > "$WORK/results/$kind-$shape-files.txt"
		# Each --prepare syncs what its removal left, so that no command's window writes
		# back the tree the run before it made and removed.
		hf "$kind-$shape-install" \
			-n "pkg install" --prepare "sh -c 'rm -rf $d/r; sync -f $d'" "$pkg $g install $shape" \
			-n "tar -xf" --prepare "sh -c 'rm -rf $d/x; mkdir $d/x; sync -f $d'" "sh -c 'tar -xf $aligned -C $d/x && sync -f $d/x'" \
			-n "cp --reflink" --prepare "sh -c 'rm -rf $d/c; sync -f $d'" "sh -c 'cp -a --reflink=$reflink $d/t $d/c && sync -f $d/c'" \
			-n "empty floor" --prepare "sh -c 'rm -rf $d/e; sync -f $d'" "$floor -empty $aligned $d/e" \
			-n "irreducible floor" --prepare "sh -c 'rm -rf $d/f; sync -f $d'" "$floor $tails $aligned $d/f"
		rm -rf "$d/r" "$d/x" "$d/c" "$d/e" "$d/f"
		sync -f "$d"
		before=$(df -k --output=used "$d" | tail -1)
		$pkg $g install "$shape"
		sync -f "$d"
		after=$(df -k --output=used "$d" | tail -1)
		echo "$((after - before)) $(du -sk --apparent-size "$d/t" | cut -f1)" > "$WORK/results/$kind-$shape-df.txt"
		$pkg $g remove "$shape"
		hf "$kind-$shape-remove" \
			-n "pkg remove" --prepare "$pkg $g install $shape" "sh -c '$pkg $g remove $shape && sync -f $d'" \
			-n "rm -rf" --prepare "sh -c 'rm -rf $d/c; cp -a --reflink=$reflink $d/t $d/c && sync -f $d'" "sh -c 'rm -rf $d/c && sync -f $d'"
		if [ "${STRACE:-0}" = 1 ]; then
			rm -rf "$d/r"
			strace -c -f -o "$WORK/results/$kind-$shape-strace.txt" $pkg $g install "$shape"
			rm -rf "$d/r"
			/usr/bin/time -v -o "$WORK/results/$kind-$shape-time.txt" $pkg $g install "$shape"
		fi
		rm -rf "$d/r" "$d/t" "$d/c" "$d/repo" "$d/cache"
	done
	unmountfs "$kind"
done

python3 "$top/bench/table.py" "$WORK/results" $FS -- $names
# The chart of the README and docs/: CHART=docs/install.svg bench/install.sh
[ -z "${CHART:-}" ] || python3 "$top/bench/chart.py" "$WORK/results" "$CHART" $FS -- $names
