#!/usr/bin/env bash
# Times what the durable commit of pkg install costs, on loop-mounted XFS, btrfs and ext4: a
# one-file package (a 1 MiB + 100 byte file: one clone and one written tail) installed into an
# empty root on a quiet filesystem, and right after another process wrote LOAD_MIB of its own
# data to the same filesystem (dd without a sync, then at once pkg install), with and without
# --no-sync; with KERNEL=1 also the kernel-shaped tree of bench/gentree (80k files) on a quiet
# filesystem, with and without --no-sync. Beside the seconds it counts, from the loop device's
# stat, the writes, the MiB written and the cache flushes each install sent to the device
# (medians): these do not depend on the machine's load.
#
# Run as root from anywhere:   bench/sync.sh
# Environment: FS="xfs btrfs ext4"  RUNS=7  LOAD_MIB=3072  KERNEL=0  KRUNS=3  WORK=/var/tmp/pkg-sync-bench
#              PKG_B=/path/to/other/pkg also times that build (say, the last commit's) in the
#              same rounds. LOOP_DIO=1 makes the loop device write to its image with direct I/O,
#              so that writes reach the machine's disk as they would on a real one, instead of
#              its page cache until a flush.
# Each round runs every variant once in turn; after a loaded run the load is deleted and the
# filesystem synced, untimed. Prints per filesystem and case the median seconds of each
# variant, and the median over rounds of each round's ratio to --no-sync under the same load.
# The images are sparse files of IMAGE_GIB (8) under $WORK, on the machine's own disk, removed
# on exit.
set -euo pipefail

FS=${FS:-xfs btrfs ext4}
LOOP_DIO=${LOOP_DIO:-0}
RUNS=${RUNS:-7}
KRUNS=${KRUNS:-3}
LOAD_MIB=${LOAD_MIB:-3072}
KERNEL=${KERNEL:-0}
IMAGE_GIB=${IMAGE_GIB:-8}
WORK=${WORK:-/var/tmp/pkg-sync-bench}
top=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" = 0 ] || { echo "bench/sync.sh: needs root (mount, mkfs)" >&2; exit 2; }
for tool in mkfs.xfs mkfs.btrfs mkfs.ext4 losetup python3; do
	command -v "$tool" >/dev/null || { echo "bench/sync.sh: $tool missing (apt-get install xfsprogs btrfs-progs python3)" >&2; exit 2; }
done

mkdir -p "$WORK/bin" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/gentree" ./bench/gentree)
pkgs=("$WORK/bin/pkg")
names=(pkg)
if [ -n "${PKG_B:-}" ]; then pkgs+=("$PKG_B") names+=(pkg-b); fi

mnt=$WORK/mnt
cleanup() {
	umount "$mnt" 2>/dev/null || true
	[ -n "${loop:-}" ] && losetup -d "$loop" 2>/dev/null || true
	rm -f "$WORK"/*.img
}
trap cleanup EXIT

# one.tar: a package of one file of 1 MiB + 100 bytes.
mkdir -p "$WORK/one/bin"
head -c $((1048576 + 100)) /dev/urandom > "$WORK/one/bin/data"
tar -C "$WORK/one" -cf "$WORK/one.tar" bin
if [ "$KERNEL" = 1 ] && ! [ -s "$WORK/kernel.tar" ]; then
	"$WORK/bin/gentree" -shape kernel > "$WORK/kernel.tar"
fi

now() { date +%s.%N; }
# timed FILE CMD...: appends CMD's wall seconds to FILE, and to FILE.io the writes, the
# flushes and the sectors written that the loop device $dev completed meanwhile (fields 5,
# 16 and 7 of its stat).
timed() {
	local out=$1 t0 t1 a b
	shift
	read -ra a < "/sys/block/$dev/stat"
	t0=$(now)
	"$@" >/dev/null 2>>"$WORK/stderr.log"
	t1=$(now)
	read -ra b < "/sys/block/$dev/stat"
	echo "$t1 - $t0" | bc >> "$out"
	echo "$((b[4] - a[4])) $((b[15] - a[15])) $((b[6] - a[6]))" >> "$out.io"
}

res=$WORK/results
rm -f "$res"/*.txt "$res"/*.txt.io
for kind in $FS; do
	umount "$mnt" 2>/dev/null || true
	mkdir -p "$mnt"
	rm -f "$WORK/$kind.img" && truncate -s "${IMAGE_GIB}G" "$WORK/$kind.img"
	case $kind in
	xfs) mkfs.xfs -q -f -m reflink=1 "$WORK/$kind.img" ;;
	btrfs) mkfs.btrfs -q -f "$WORK/$kind.img" ;;
	ext4) mkfs.ext4 -q -F "$WORK/$kind.img" ;;
	esac
	loop=$(losetup --direct-io="$([ "$LOOP_DIO" = 1 ] && echo on || echo off)" -f --show "$WORK/$kind.img")
	dev=${loop#/dev/}
	mount "$loop" "$mnt"
	d=$mnt
	g="--cache $d/cache --repo $d/repo --quiet"
	"${pkgs[0]}" --quiet repo add "$d/repo" "$WORK/one.tar" --name one --version 1 2>/dev/null
	"${pkgs[0]}" $g --root "$d/warm" install one 2>/dev/null # fetched and settled: the rounds settle nothing
	[ "$KERNEL" = 1 ] && "${pkgs[0]}" --quiet repo add "$d/repo" "$WORK/kernel.tar" --name kernel --version 1 &&
		"${pkgs[0]}" $g --root "$d/warm" install kernel
	rm -rf "$d/warm"
	sync -f "$d"
	for ((round = 0; round < RUNS; round++)); do
		for i in "${!pkgs[@]}"; do
			for sync in sync no-sync; do
				flag=
				[ $sync = no-sync ] && flag=--no-sync
				v=${names[$i]}-$sync
				rm -rf "$d/r" && sync -f "$d"
				timed "$res/$kind-quiet-$v.txt" "${pkgs[$i]}" $g $flag --root "$d/r" install one
				rm -rf "$d/r" && sync -f "$d"
				dd if=/dev/zero of="$d/load" bs=1M count="$LOAD_MIB" status=none
				timed "$res/$kind-load-$v.txt" "${pkgs[$i]}" $g $flag --root "$d/r" install one
				rm -f "$d/load" && sync -f "$d"
			done
		done
	done
	for ((round = 0; round < KERNEL * KRUNS; round++)); do
		for i in "${!pkgs[@]}"; do
			for sync in sync no-sync; do
				flag=
				[ $sync = no-sync ] && flag=--no-sync
				rm -rf "$d/r" && sync -f "$d"
				timed "$res/$kind-kernel-${names[$i]}-$sync.txt" "${pkgs[$i]}" $g $flag --root "$d/r" install kernel
				sync -f "$d" # what --no-sync left to write is not the next run's
			done
		done
	done
	rm -rf "$d/r"
	umount "$mnt"
	losetup -d "$loop"
	rm -f "$WORK/$kind.img"
done

python3 - "$res" "$FS" "${names[*]}" <<'EOF'
import os, statistics, sys
res, kinds, names = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def runs(name, ext=".txt"):
    p = os.path.join(res, name + ext)
    return [l.split() for l in open(p)] if os.path.exists(p) else []
def med(rows, col):
    return statistics.median(float(r[col]) for r in rows)
print(f"{'fs':6} {'case':7} {'build':6} {'sync s':>8} {'no-sync s':>10} {'ratio':>6}"
      f" {'writes':>7} {'flushes':>7} {'MiB':>7} {'nosync w':>8} {'nosync f':>8} {'nosync MiB':>10}")
for kind in kinds:
    for case in ("quiet", "load", "kernel"):
        for n in names:
            s, ns = runs(f"{kind}-{case}-{n}-sync"), runs(f"{kind}-{case}-{n}-no-sync")
            if not s:
                continue
            io, nio = runs(f"{kind}-{case}-{n}-sync", ".txt.io"), runs(f"{kind}-{case}-{n}-no-sync", ".txt.io")
            ratio = statistics.median(float(a[0]) / float(b[0]) for a, b in zip(s, ns))
            print(f"{kind:6} {case:7} {n:6} {med(s, 0):8.3f} {med(ns, 0):10.3f} {ratio:6.2f}"
                  f" {med(io, 0):7.0f} {med(io, 1):7.0f} {med(io, 2) / 2048:7.1f}"
                  f" {med(nio, 0):8.0f} {med(nio, 1):8.0f} {med(nio, 2) / 2048:10.1f}")
EOF
