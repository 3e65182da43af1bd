#!/usr/bin/env bash
# Times several builds of pkg on bench/peers.sh's npm tree, round by round, the builds'
# order turning each round, so that a change's effect shows beside the machine's noise:
# warm (offline, from the build's own filled cache) or cold (an empty cache, the tarballs
# over HTTP on 127.0.0.1), on a fresh loop XFS or btrfs. Each window is `pkg sync` of the
# imported lock into an empty root and a `sync -f` of the filesystem.
#
# Run as root from anywhere, after a bench/peers.sh run (PARTS=npm at least) left its
# registry, lock and server in WORK:   bench/npmrounds.sh warm|cold ROUNDS PKG...
# Environment: FS=xfs (or btrfs)  WORK=/var/tmp/pkg-peers (bench/peers.sh's)
#              MNT=/var/tmp/pkg-npmrounds (the loop filesystem's image and mount point)
# Prints each round's milliseconds, one column per build, then the medians and, for each
# build, the median over the rounds of its time over the first build's.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: bench/npmrounds.sh warm|cold ROUNDS PKG..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/npmrounds.sh: needs root (mount, mkfs)" >&2; exit 2; }
phase=$1 rounds=$2
shift 2
case $phase in warm | cold) ;; *) echo "bench/npmrounds.sh: $phase: want warm or cold" >&2; exit 2 ;; esac
FS=${FS:-xfs}
WORK=${WORK:-/var/tmp/pkg-peers}
MNT=${MNT:-/var/tmp/pkg-npmrounds}
lock=$WORK/locks/pkg.lock
[ -s "$lock" ] && [ -x "$WORK/bin/fetchtool" ] ||
	{ echo "bench/npmrounds.sh: no registry and lock in $WORK: run bench/peers.sh (PARTS=npm) first" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"
d=$MNT/mnt
mkdir -p "$MNT"
loopfs "$FS" "$MNT/$FS.img" 8G "$d"
"$WORK/bin/fetchtool" serve "$WORK/www" "$MNT/url" &
server=$!
trap 'kill $server 2>/dev/null; umount "$d" 2>/dev/null; rm -f "$MNT/$FS.img"' EXIT
for _ in $(seq 50); do [ -s "$MNT/url" ] && break; sleep 0.1; done
url=$(cat "$MNT/url")

# install I PHASE: build I's sync of the lock into its root, from its cache.
install() {
	local i=$1 b=${builds[$1]}
	if [ "$2" = warm ]; then
		"$b" --quiet --root "$d/root$i" --cache "$d/cache$i" --offline sync -f "$lock"
	else
		"$b" --quiet --root "$d/root$i" --cache "$d/cache$i" --repo "${url}pkg/" sync -f "$lock"
	fi
}
builds=("$@")
n=${#builds[@]}
if [ "$phase" = warm ]; then
	for i in $(seq 0 $((n - 1))); do install "$i" cold >/dev/null; done # fills each cache, untimed
fi
for r in $(seq "$rounds"); do
	declare -A ms=()
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + r) % n))
		rm -rf "$d/root$i"
		[ "$phase" = warm ] || rm -rf "$d/cache$i"
		sync -f "$d"
		t0=$(date +%s%N)
		install "$i" "$phase"
		sync -f "$d"
		t1=$(date +%s%N)
		ms[$i]=$(((t1 - t0) / 1000000))
	done
	line=
	for i in $(seq 0 $((n - 1))); do line="$line ${ms[$i]}"; done
	echo "$line"
done | python3 -c '
import statistics, sys
rows = [list(map(int, l.split())) for l in sys.stdin]
for r in rows:
    print(*r)
cols = list(zip(*rows))
print("medians (ms):", *[statistics.median(c) for c in cols])
print("per round, over the first build:", *["%.3f" % statistics.median(r[i] / r[0] for r in rows) for i in range(len(cols))])
'
