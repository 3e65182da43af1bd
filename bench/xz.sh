#!/usr/bin/env bash
# Times a cold pkg install of a .tar.xz from a local repository (empty cache, empty root)
# against xz -dc | tar -x and tar -xJf of the same archive into the same filesystem, and
# xz -dc alone, in rounds that run each command once in turn, so that a machine whose load
# drifts favours none; prints medians of wall and CPU (user+sys) seconds over the rounds and
# the median of each round's ratio to xz -dc | tar -x. Every extraction ends with a sync.
#
# Run from anywhere:   bench/xz.sh ARCHIVE.tar.xz
#   (for a .deb: ar x PACKAGE.deb data.tar.xz, then bench/xz.sh data.tar.xz)
# Environment: ROUNDS=5  WORK=/var/tmp/pkg-xzbench (emptied; on the filesystem to measure)
#              BASE=DIR also times the pkg built from the checkout DIR (the code before a change)
set -euo pipefail

[ $# = 1 ] && [ -f "$1" ] || { echo "usage: bench/xz.sh ARCHIVE.tar.xz" >&2; exit 2; }
archive=$(realpath "$1")
ROUNDS=${ROUNDS:-5}
WORK=${WORK:-/var/tmp/pkg-xzbench}
top=$(cd "$(dirname "$0")/.." && pwd)
for tool in xz tar python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench/xz.sh: $tool missing" >&2; exit 2; }
done

rm -rf "$WORK" && mkdir -p "$WORK/bin" "$WORK/repo"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg)
pkg=$WORK/bin/pkg
[ -z "${BASE:-}" ] || (cd "$BASE" && go build -o "$WORK/bin/pkg-base" ./cmd/pkg)
"$pkg" --quiet repo add "$WORK/repo" "$archive" --name xzbench --version 1 2>/dev/null
xz -lv "$archive" | grep -E '^ +(Blocks|Compressed size|Uncompressed size):' >&2

# run NAME CMD...: runs CMD in a fresh $WORK/out and prints NAME, wall, user and sys seconds.
run() {
	local name=$1
	shift
	rm -rf "$WORK/out" "$WORK/cache" && mkdir "$WORK/out"
	sync
	/usr/bin/time -f "$name %e %U %S" -o "$WORK/time" "$@" >/dev/null
	cat "$WORK/time"
}
for _ in $(seq "$ROUNDS"); do
	run xz-dc xz -dc "$archive"
	run xz-dc-tar sh -c 'xz -dc "$1" | tar -x -C "$2" && sync -f "$2"' - "$archive" "$WORK/out"
	run tar-xJf sh -c 'tar -xJf "$1" -C "$2" && sync -f "$2"' - "$archive" "$WORK/out"
	run pkg-install "$pkg" --quiet --repo "$WORK/repo" --root "$WORK/out" --cache "$WORK/cache" install xzbench
	[ -z "${BASE:-}" ] ||
		run pkg-install-base "$WORK/bin/pkg-base" --quiet --repo "$WORK/repo" --root "$WORK/out" --cache "$WORK/cache" install xzbench
done > "$WORK/rounds.txt" 2>"$WORK/stderr.txt" || { cat "$WORK/stderr.txt" >&2; exit 1; }

python3 - "$WORK/rounds.txt" <<'EOF'
import statistics, sys

runs = {}  # command -> [(wall, cpu)] in round order
for line in open(sys.argv[1]):
    name, wall, user, sys_ = line.split()
    runs.setdefault(name, []).append((float(wall), float(user) + float(sys_)))
med = statistics.median
base = runs["xz-dc-tar"]
print("| command | wall s | CPU s (user+sys) | wall / xz -dc \\| tar -x | CPU / xz -dc \\| tar -x |")
print("|---|---:|---:|---:|---:|")
for name, label in (("xz-dc", "xz -dc > /dev/null"), ("xz-dc-tar", "xz -dc | tar -x"),
                    ("tar-xJf", "tar -xJf"), ("pkg-install", "pkg install (cold)"),
                    ("pkg-install-base", "pkg install (cold), BASE")):
    if name not in runs:
        continue
    r = runs[name]
    wr = med(a[0] / b[0] for a, b in zip(r, base))
    cr = med(a[1] / b[1] for a, b in zip(r, base))
    print(f"| {label} | {med(x[0] for x in r):.2f} | {med(x[1] for x in r):.2f} | {wr:.2f} | {cr:.2f} |")
print(f"\nmedians of {len(base)} rounds; ratios are medians of each round's ratio")
EOF
