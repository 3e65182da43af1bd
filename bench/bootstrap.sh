#!/usr/bin/env bash
# Times a CI job's setup with pkg: pkg sync of a lockfile of 40 packages (10 KiB to 50 MiB,
# about 2,600 files, 250 MiB, tar.zst) served over loopback HTTP, into a root whose cache
# shares a loop-mounted XFS (reflink) with it:
#   cold    empty root and cache: every archive downloaded, verified, converted, cloned
#   warm    --offline, empty root, cache kept (a CI cache restored); also with --no-sync
#   no-op   everything installed already
# against a shell loop of `curl -s URL | tar --zstd -x` of the same archives into an empty
# directory, plain and followed by a sync of the filesystem (pkg syncs once before it commits).
#
# Run as root from anywhere:   bench/bootstrap.sh
# Environment: RUNS=10  WORK=/var/tmp/pkg-bench  (the repository is kept under $WORK/bootstrap
#              and reused; the XFS image is made and removed each run)
# Needs go, curl, zstd, GNU tar, hyperfine, python3, mkfs.xfs (apt-get install curl zstd
# hyperfine xfsprogs). Results: a table on stdout, hyperfine JSON under $WORK/results.
set -euo pipefail

RUNS=${RUNS:-10}
WORK=${WORK:-/var/tmp/pkg-bench}
top=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" = 0 ] || { echo "bench/bootstrap.sh: needs root (mount, mkfs)" >&2; exit 2; }
for tool in go curl zstd tar hyperfine python3 mkfs.xfs; do
	command -v "$tool" >/dev/null || { echo "bench/bootstrap.sh: $tool missing (apt-get install curl zstd hyperfine xfsprogs)" >&2; exit 2; }
done

bench=$WORK/bootstrap
mkdir -p "$WORK/bin" "$WORK/results" "$bench"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/fetchtool" ./bench/fetchtool &&
	go build -o "$WORK/bin/bootgen" ./bench/bootgen)
pkg=$WORK/bin/pkg

# The repository: package i of 40 has 10 KiB × 5120^((i-1)/39) bytes of files, so sizes
# grow geometrically from 10 KiB to 50 MiB.
repo=$bench/repo
names=$(seq -f 'p%02g' 1 40 | tr '\n' ' ')
if [ ! -s "$repo/index.json" ]; then
	rm -rf "$repo" && mkdir -p "$repo"
	for i in $(seq 1 40); do
		n=$(printf 'p%02d' "$i")
		size=$(python3 -c "print(int(10240 * 5120 ** (($i - 1) / 39)))")
		"$WORK/bin/bootgen" "$n" "$i" "$size" > "$bench/$n.tar"
		zstd -q -3 -f --rm "$bench/$n.tar" -o "$bench/$n-1.0.tar.zst"
		"$pkg" --quiet repo add "$repo" "$bench/$n-1.0.tar.zst" --name "$n" --version 1.0 --bin "bin/$n"
		rm -f "$bench/$n-1.0.tar.zst"
	done
fi

# Everything below is undone on exit, whatever happens: the server, the mount, the image.
mnt=$bench/mnt img=$bench/xfs.img server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null || true
	if mountpoint -q "$mnt"; then umount "$mnt" || umount -l "$mnt"; fi
	rm -f "$img"
}
trap cleanup EXIT

rm -f "$bench/url"
"$WORK/bin/fetchtool" serve "$repo" "$bench/url" &
server=$!
for _ in $(seq 50); do [ -s "$bench/url" ] && break; sleep 0.1; done
url=$(cat "$bench/url")

mkdir -p "$mnt"
if mountpoint -q "$mnt"; then umount "$mnt"; fi
rm -f "$img" && truncate -s 8G "$img"
mkfs.xfs -q -f -m reflink=1 "$img"
mount -o loop "$img" "$mnt"

d=$mnt
lock=$d/pkg.lock
g="--root $d/root --cache $d/cache --quiet"
# shellcheck disable=SC2086 # $g and $names are word lists
"$pkg" $g --repo "$url" lock -o "$lock" $names
python3 -c 'import json,sys; [print(p["url"]) for p in json.load(open(sys.argv[1]))["packages"]]' "$lock" > "$bench/urls"
loop="for u in \$(cat $bench/urls); do curl -sf \"\$u\" | tar --zstd -x -C $d/x || exit 1; done"

hf() { # hf NAME ARGS...: hyperfine with the common options, JSON to results/NAME.json
	local name=$1
	shift
	hyperfine -N --style none --warmup 1 --runs "$RUNS" --export-json "$WORK/results/$name.json" "$@" >/dev/null
}

# cold: nothing cached; its last run leaves the cache full for warm.
hf bootstrap-cold -n "pkg sync (cold)" --prepare "sh -c 'rm -rf $d/root $d/cache; sync -f $d'" \
	"$pkg $g --repo $url sync -f $lock"
hf bootstrap-warm -n "pkg --offline sync (warm)" --prepare "sh -c 'rm -rf $d/root; sync -f $d'" \
	"$pkg $g --offline sync -f $lock" \
	-n "pkg --offline --no-sync sync (warm)" --prepare "sh -c 'rm -rf $d/root; sync -f $d'" \
	"$pkg $g --offline --no-sync sync -f $lock"
"$pkg" $g --offline sync -f "$lock"
hf bootstrap-noop -n "pkg sync (no-op)" "$pkg $g sync -f $lock"
hf bootstrap-curl -n "curl | tar --zstd -x" --prepare "sh -c 'rm -rf $d/x; mkdir $d/x; sync -f $d'" "sh -c '$loop'" \
	-n "curl | tar --zstd -x; sync" --prepare "sh -c 'rm -rf $d/x; mkdir $d/x; sync -f $d'" "sh -c '$loop; sync -f $d/x'"

files=$(find "$d/root/pkgs" -type f | wc -l)
bytes=$(du -sb --apparent-size "$d/root/pkgs" | cut -f1)
python3 - "$WORK/results" "$files" "$bytes" <<'EOF'
import json, sys

res, files, nbytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
for name in ("cold", "warm", "noop", "curl"):
    with open(f"{res}/bootstrap-{name}.json") as f:
        rows += [(r["command"], r["median"], r["min"], r["max"]) for r in json.load(f)["results"]]
curl = dict((c, m) for c, m, _, _ in rows)["curl | tar --zstd -x"]
print(f"40 packages, {files} files, {nbytes / 2**20:.0f} MiB installed; medians of hyperfine runs")
print()
print("| command | median | min | max | curl\\|tar ÷ this |")
print("|---|---:|---:|---:|---:|")
for cmd, med, lo, hi in rows:
    c = cmd.replace("|", "\\|")
    print(f"| {c} | {med * 1000:.1f} ms | {lo * 1000:.1f} ms | {hi * 1000:.1f} ms | {curl / med:.1f}x |")
warm = dict((c, m) for c, m, _, _ in rows)["pkg --offline sync (warm)"]
noop = dict((c, m) for c, m, _, _ in rows)["pkg sync (no-op)"]
print()
print(f"targets: warm >= 5x faster than curl|tar: {curl / warm:.1f}x {'ok' if curl / warm >= 5 else 'MISSED'}; "
      f"no-op < 100 ms: {noop * 1000:.1f} ms {'ok' if noop < 0.1 else 'MISSED'}")
EOF
