#!/usr/bin/env bash
# Times pkg verify (extent maps where the data is cloned) against pkg verify --full and
# sha256sum of the same files (one process, and one per core), on a loop-mounted XFS,
# warm (page cache kept) and cold (caches dropped before each run).
#
# Run as root from anywhere:   bench/verify.sh
# Environment: SHAPES="big kernel" (bench/gentree shapes)  FS="xfs"  RUNS=5  WORK=/var/tmp/pkg-verify-bench
#              DEBS="golang-1.19-go_*.deb ..." also times packages published from these files
#              (apt-get download golang-1.19-go golang-1.19-src).
# Results: medians and ratios on stdout, hyperfine JSON under $WORK/results.
set -euo pipefail

SHAPES=${SHAPES:-big kernel}
FS=${FS:-xfs}
RUNS=${RUNS:-5}
WORK=${WORK:-/var/tmp/pkg-verify-bench}
DEBS=${DEBS:-}
top=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" = 0 ] || { echo "bench/verify.sh: needs root (mount, mkfs, drop_caches)" >&2; exit 2; }
for tool in hyperfine mkfs.xfs python3; do
	command -v "$tool" >/dev/null || { echo "bench/verify.sh: $tool missing (apt-get install hyperfine xfsprogs)" >&2; exit 2; }
done
debs=()
for f in $DEBS; do debs+=("$(realpath "$f")"); done

mkdir -p "$WORK/bin" "$WORK/tars" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/gentree" ./bench/gentree)
pkg=$WORK/bin/pkg
for shape in $SHAPES; do
	[ -s "$WORK/tars/$shape.tar" ] || "$WORK/bin/gentree" -shape "$shape" > "$WORK/tars/$shape.tar"
done

mnt=$WORK/mnt
cleanup() { umount "$mnt" 2>/dev/null || true; rm -f "$WORK"/*.img; }
trap cleanup EXIT

hf() { # hf NAME ARGS...: hyperfine with the common options, JSON to results/NAME.json
	local name=$1
	shift
	hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$WORK/results/$name.json" "$@" >/dev/null
}

names=()
for kind in $FS; do
	mkdir -p "$mnt"
	umount "$mnt" 2>/dev/null || true
	rm -f "$WORK/$kind.img" && truncate -s 24G "$WORK/$kind.img"
	case $kind in
	xfs) mkfs.xfs -q -f -m reflink=1 "$WORK/$kind.img" ;;
	btrfs) mkfs.btrfs -q -f "$WORK/$kind.img" >/dev/null ;;
	esac
	mount -o loop "$WORK/$kind.img" "$mnt"
	d=$mnt
	g="--root $d/r --cache $d/cache --repo $d/repo --quiet"
	pkgs=()
	for shape in $SHAPES; do
		$pkg --quiet repo add "$d/repo" "$WORK/tars/$shape.tar" --name "$shape" --version 1
		pkgs+=("$shape")
	done
	for deb in "${debs[@]}"; do
		$pkg --quiet repo add "$d/repo" "$deb"
		pkgs+=("$(basename "$deb" | cut -d_ -f1)")
	done
	for p in "${pkgs[@]}"; do
		$pkg $g install "$p"
		files=$(find "$d/r/pkgs/$p" -type f | wc -l)
		bytes=$(du -sb --apparent-size "$d/r/pkgs/$p" | cut -f1)
		echo "$kind $p: $files files, $((bytes >> 20)) MiB"
		sums="find $d/r/pkgs/$p -type f -print0"
		for temp in warm cold; do
			prep=()
			[ "$temp" = cold ] && prep=(--prepare "sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'")
			name=$kind-$p-$temp
			hf "$name" "${prep[@]}" \
				-n "pkg verify" "$pkg $g verify $p" \
				-n "pkg verify --full" "$pkg $g verify --full $p" \
				-n "sha256sum" "sh -c '$sums | xargs -0 sha256sum >/dev/null'" \
				-n "sha256sum -P$(nproc)" "sh -c '$sums | xargs -0 -n 64 -P $(nproc) sha256sum >/dev/null'"
			names+=("$name")
		done
		$pkg $g remove "$p"
	done
	umount "$mnt"
	rm -f "$WORK/$kind.img"
done

python3 - "$WORK/results" "${names[@]}" <<'EOF'
import json, sys
results, names = sys.argv[1], sys.argv[2:]
print(f"{'case':<28} {'command':<20} {'median s':>9} {'× pkg verify':>13}")
for n in names:
    rs = json.load(open(f"{results}/{n}.json"))["results"]
    base = rs[0]["median"]
    for r in rs:
        print(f"{n:<28} {r['command']:<20} {r['median']:>9.3f} {r['median'] / base:>13.1f}")
EOF
