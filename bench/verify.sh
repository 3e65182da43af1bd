#!/usr/bin/env bash
# Times pkg verify (extent maps where the data is cloned) against pkg verify --full and
# sha256sum of the same files, on a loop-mounted XFS, warm (page cache kept) and cold
# (caches dropped before each command).
#
# Run as root from anywhere:   bench/verify.sh
# Environment: SHAPES="big kernel" (bench/gentree shapes)  FS="xfs"  RUNS=5  WORK=/var/tmp/pkg-verify-bench
#              DEBS="golang-1.19-go_*.deb ..." also times packages published from these files
#              (apt-get download golang-1.19-go golang-1.19-src).
#              TARS="linux-source-6.1.tar.xz ..." also times these tars (any compression pkg reads),
#              each published as the package named by its file name without .tar and what follows
#              (the kernel's: dpkg-deb -x linux-source-6.1_*.deb, then usr/src/linux-source-6.1.tar.xz).
#              TEMPS="warm cold": cold drops the page cache of the whole machine before each command.
#              PKG_A=/path/to/older/pkg also times that build's pkg verify in every round.
# Each round runs every command once, in turn, after a warm-up round. Results: medians over
# rounds and the median of each round's ratio on stdout, hyperfine JSON under $WORK/results.
set -euo pipefail

SHAPES=${SHAPES:-big kernel}
FS=${FS:-xfs}
RUNS=${RUNS:-5}
WORK=${WORK:-/var/tmp/pkg-verify-bench}
DEBS=${DEBS:-}
TARS=${TARS:-}
TEMPS=${TEMPS:-warm cold}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"

[ "$(id -u)" = 0 ] || { echo "bench/verify.sh: needs root (mount, mkfs, drop_caches)" >&2; exit 2; }
for tool in hyperfine mkfs.xfs python3; do
	command -v "$tool" >/dev/null || { echo "bench/verify.sh: $tool missing (apt-get install hyperfine xfsprogs)" >&2; exit 2; }
done
debs=()
for f in $DEBS; do debs+=("$(realpath "$f")"); done
tars=()
for f in $TARS; do tars+=("$(realpath "$f")"); done

mkdir -p "$WORK/bin" "$WORK/tars" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/gentree" ./bench/gentree)
pkg=$WORK/bin/pkg
for shape in $SHAPES; do
	[ -s "$WORK/tars/$shape.tar" ] || "$WORK/bin/gentree" -shape "$shape" > "$WORK/tars/$shape.tar"
done

mnt=$WORK/mnt
cleanup() { umount "$mnt" 2>/dev/null || true; rm -f "$WORK"/*.img; }
trap cleanup EXIT

# rounds NAME ARGS...: runs hyperfine's commands once each, in turn, in a warm-up round and
# then RUNS rounds, so that a machine whose load drifts favours none; JSON to results/NAME-R.json.
rounds() {
	local name=$1
	shift
	for r in $(seq 0 "$RUNS"); do
		hyperfine -N --style none --runs 1 --export-json "$WORK/results/$name-$r.json" "$@" >/dev/null 2>&1
	done
}

names=()
for kind in $FS; do
	loopfs "$kind" "$WORK/$kind.img" 24G "$mnt"
	d=$mnt
	g="--root $d/r --cache $d/cache --repo $d/repo --quiet"
	pkgs=()
	for shape in $SHAPES; do
		$pkg --quiet repo add "$d/repo" "$WORK/tars/$shape.tar" --name "$shape" --version 1
		pkgs+=("$shape")
	done
	for deb in "${debs[@]}"; do
		$pkg --quiet repo add "$d/repo" "$deb" --depends '' # each alone
		pkgs+=("$(basename "$deb" | cut -d_ -f1)")
	done
	for t in "${tars[@]}"; do
		name=$(basename "$t") && name=${name%%.tar*}
		$pkg --quiet repo add "$d/repo" "$t" --name "$name" --version 1
		pkgs+=("$name")
	done
	for p in "${pkgs[@]}"; do
		$pkg $g install "$p"
		# The root's prefix holds each file of the one package installed once, linked from
		# pkgs/ or in a directory folded there.
		sums="find $d/r -path $d/r/pkgs -prune -o -path $d/r/.pkg -prune -o -type f -print0"
		files=$($sums | tr -cd '\0' | wc -c)
		bytes=$($sums | du -cb --apparent-size --files0-from=- | tail -1 | cut -f1)
		echo "$kind $p: $files files, $((bytes >> 20)) MiB"
		for temp in $TEMPS; do
			prep=()
			[ "$temp" = cold ] && prep=(--prepare "sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'")
			name=$kind-$p-$temp
			other=()
			[ -z "${PKG_A:-}" ] || other=(-n "PKG_A verify" "$PKG_A $g verify $p")
			rounds "$name" "${prep[@]}" \
				-n "pkg verify" "$pkg $g verify $p" "${other[@]}" \
				-n "pkg verify --full" "$pkg $g verify --full $p" \
				-n "sha256sum" "sh -c '$sums | xargs -0 sha256sum >/dev/null'"
			names+=("$name")
		done
		$pkg $g remove "$p"
	done
	umount "$mnt"
	rm -f "$WORK/$kind.img"
done

python3 - "$WORK/results" "$RUNS" "${names[@]}" <<'EOF'
import json, statistics, sys
results, runs, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"load: {open('/proc/loadavg').read().strip()}")
print(f"{'case':<32} {'command':<18} {'median s':>9} {'median ratio to pkg verify':>27}")
for n in names:
    rounds = [json.load(open(f"{results}/{n}-{r}.json"))["results"] for r in range(1, runs + 1)]
    for i, c in enumerate(rounds[0]):
        t = [rs[i]["mean"] for rs in rounds]
        ratio = [rs[i]["mean"] / rs[0]["mean"] for rs in rounds]
        print(f"{n:<32} {c['command']:<18} {statistics.median(t):>9.3f} {statistics.median(ratio):>27.1f}")
EOF
