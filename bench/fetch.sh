#!/usr/bin/env bash
# Times pkg fetch of a package of 1 GiB of files, served over loopback HTTP as tar.zst and as
# tar.gz, against the pipe that streams the same (curl -s URL | zstd -d > file) and against
# the staged sequence (curl -o x URL && zstd -d x); then measures pkg fetch's peak RSS
# (/usr/bin/time -v) and counts its syscalls (strace -c -f).
#
# Run from anywhere:   bench/fetch.sh
# Environment: SIZE=1073741824 (bytes of file data)  RUNS=7 (rounds)  WORK=/var/tmp/pkg-fetch-bench
#              PKG_B=path of another pkg binary (an older build, say), timed in the same rounds
#              ARCHIVES="zst gz" (which compressions to time)
#              ARCHIVE=path of a real .tar.zst, .tar.gz or .tar.xz, timed instead of the generated
#              package (the pipe then decompresses with zstd -d, gzip -d or xz -d)
#              (a generated tree's even sizes and fresh files miss what real ones cost)
#              FS=xfs|btrfs (as root): the cache and the commands' output on a fresh loop
#              filesystem of that kind, made and mounted under WORK; ext4 (the default): WORK's
#              filesystem (also ext4 on this project's machines)
# Needs go, curl, zstd, gzip, hyperfine, python3, strace and /usr/bin/time (apt-get install
# curl zstd hyperfine strace time), and about 4 GiB free under WORK.
# Every command starts with an empty cache and output, after a sync, so none pays for the
# writeback of another; none syncs its output (pkg fetch leaves its entry marked unsynced for
# the install that uses it to sync).
# Results: a table on stdout, hyperfine JSON (one file per round) and the RSS and strace
# reports under $WORK.
set -euo pipefail

SIZE=${SIZE:-1073741824}
RUNS=${RUNS:-7}
ARCHIVES=${ARCHIVES:-zst gz}
[ "$RUNS" -ge 1 ] || { echo "bench/fetch.sh: RUNS must be at least 1" >&2; exit 2; }
WORK=${WORK:-/var/tmp/pkg-fetch-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"

for tool in go curl zstd gzip hyperfine python3 strace /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench/fetch.sh: $tool missing (apt-get install curl zstd hyperfine strace time)" >&2; exit 2; }
done
FS=${FS:-ext4}
case $FS in
ext4) ;;
xfs | btrfs)
	[ "$(id -u)" = 0 ] || { echo "bench/fetch.sh: FS=$FS needs root (mkfs, mount)" >&2; exit 2; }
	command -v "mkfs.$FS" >/dev/null || { echo "bench/fetch.sh: mkfs.$FS missing (apt-get install xfsprogs btrfs-progs)" >&2; exit 2; } ;;
*) echo "bench/fetch.sh: FS must be xfs, btrfs or ext4" >&2; exit 2 ;;
esac
if [ -n "${ARCHIVE:-}" ]; then
	case $ARCHIVE in
	*.tar.zst) ARCHIVES=zst ;;
	*.tar.gz) ARCHIVES=gz ;;
	*.tar.xz) ARCHIVES=xz ;;
	*) echo "bench/fetch.sh: ARCHIVE must be a .tar.zst, a .tar.gz or a .tar.xz" >&2; exit 2 ;;
	esac
	[ -s "$ARCHIVE" ] || { echo "bench/fetch.sh: $ARCHIVE: no such archive" >&2; exit 2; }
	ARCHIVE=$(realpath "$ARCHIVE")
fi

mkdir -p "$WORK/bin" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/fetchtool" ./bench/fetchtool)
pkg=$WORK/bin/pkg
repo=$WORK/repo-$SIZE

# The repository: one tree, compressed twice, added with pkg repo add (which checks it);
# or the real archive, as package tree-zst (or tree-gz).
if [ -n "${ARCHIVE:-}" ]; then
	repo=$WORK/repo-real
	rm -rf "$repo" && mkdir -p "$repo"
	"$pkg" --quiet repo add "$repo" "$ARCHIVE" --name "tree-$ARCHIVES" --version 1
elif [ ! -s "$repo/index.json" ]; then
	rm -rf "$repo" && mkdir -p "$repo"
	"$WORK/bin/fetchtool" gen "$SIZE" > "$WORK/tree.tar"
	zstd -q -3 -T0 -f "$WORK/tree.tar" -o "$WORK/tree.tar.zst"
	gzip -6 -c "$WORK/tree.tar" > "$WORK/tree.tar.gz"
	"$pkg" --quiet repo add "$repo" "$WORK/tree.tar.zst" --name tree-zst --version 1
	"$pkg" --quiet repo add "$repo" "$WORK/tree.tar.gz" --name tree-gz --version 1
	rm -f "$WORK/tree.tar" "$WORK/tree.tar.zst" "$WORK/tree.tar.gz"
fi

rm -f "$WORK/url"
"$WORK/bin/fetchtool" serve "$repo" "$WORK/url" &
server=$!
mnt=$WORK mounted=
trap 'kill $server; if [ -n "$mounted" ]; then umount "$mnt" && rm -f "$WORK/$FS.img"; fi' EXIT
if [ "$FS" != ext4 ]; then # sparse, as large as any run here needs
	mnt=$WORK/mnt-$FS
	loopfs "$FS" "$WORK/$FS.img" 32G "$mnt"
	mounted=1
fi
for _ in $(seq 50); do [ -s "$WORK/url" ] && break; sleep 0.1; done
url=$(cat "$WORK/url")

cache=$mnt/cache out=$mnt/out.tar dl=$mnt/download
clean="rm -rf $cache $out $dl; sync"
rm -f "$WORK/results/"*.json
# hyperfine runs one command's runs back to back; on a shared machine whose speed drifts
# over minutes that biases the comparison, so each round runs every command once, in turn,
# and the table gives medians over rounds and the median of each round's ratio.
for z in $ARCHIVES; do
	case $z in
	gz) unz="gzip -d" ;;
	xz) unz="xz -d" ;;
	*) unz="zstd -d -q" ;;
	esac
	archive=$(basename "$(ls "$repo"/tree-"$z"*.tar."$z" | head -1)") # as repo add named it
	for round in $(seq 0 "$RUNS"); do # round 0 is the warm-up
		other=()
		[ -n "${PKG_B:-}" ] && other=(-n "pkg fetch (PKG_B)" "$PKG_B --quiet --cache $cache --repo $url fetch tree-$z")
		hyperfine --runs 1 --prepare "$clean" --cleanup "$clean" \
			--export-json "$WORK/results/$z-$round.json" \
			-n "pkg fetch" "$pkg --quiet --cache $cache --repo $url fetch tree-$z" "${other[@]}" \
			-n "curl | ${unz%% *} -d" "curl -sf ${url}$archive | $unz > $out" \
			-n "curl -o && ${unz%% *} -d" "curl -sf -o $dl ${url}$archive && $unz < $dl > $out" >/dev/null
	done
done

for z in $ARCHIVES; do
	eval "$clean"
	/usr/bin/time -v "$pkg" --quiet --cache "$cache" --repo "$url" fetch "tree-$z" 2> "$WORK/results/rss-$z.txt"
	eval "$clean"
	strace -c -f -o "$WORK/results/strace-$z.txt" "$pkg" --quiet --cache "$cache" --repo "$url" fetch "tree-$z"
done
eval "$clean"

python3 - "$WORK/results" "$RUNS" "$FS" "${ARCHIVE:-generated, $SIZE bytes of files}" $ARCHIVES <<'EOF'
import json, re, statistics, sys

res, rounds, fs, what, zs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
med = statistics.median
print(f"{what}, cache and output on {fs}, {rounds} rounds")
print()
# CPU is user plus system time of the command and its children: on a shared machine it
# varies less than wall time, and shows how much of the machine each command needs.
print("| archive | command | median | min | max | pkg fetch / this (median of rounds) | CPU (median) |")
print("|---|---|---:|---:|---:|---:|---:|")
for z in zs:
    times, cpu = {}, {}  # command -> its wall time, and its CPU time, in each round
    for r in range(1, rounds + 1):
        with open(f"{res}/{z}-{r}.json") as f:
            for c in json.load(f)["results"]:
                times.setdefault(c["command"], []).append(c["times"][0])
                cpu.setdefault(c["command"], []).append(c["user"] + c["system"])
    cmds = list(times)
    pkg = times[cmds[0]]
    for c in cmds:
        t = times[c]
        ratio = med(p / x for p, x in zip(pkg, t))
        name = c.replace("|", "\\|")
        print(f"| tar.{z} | `{name}` | {med(t):.2f} s | {min(t):.2f} s | {max(t):.2f} s | {ratio:.2f} | {med(cpu[c]):.2f} s |")
print()
for z in zs:
    with open(f"{res}/rss-{z}.txt") as f:
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", f.read()).group(1))
    with open(f"{res}/strace-{z}.txt") as f:
        text = f.read()
    calls = {m.group(2): int(m.group(1)) for m in
             re.finditer(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", text, re.M)}
    total = calls.pop("total", sum(calls.values()))
    top = ", ".join(f"{n} {c}" for c, n in sorted(calls.items(), key=lambda kv: -kv[1])[:6])
    print(f"pkg fetch tree-{z}: peak RSS {rss / 1024:.1f} MiB; {total} syscalls: {top}")
EOF
