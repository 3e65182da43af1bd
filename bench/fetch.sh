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

for tool in go curl zstd gzip hyperfine python3 strace /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench/fetch.sh: $tool missing (apt-get install curl zstd hyperfine strace time)" >&2; exit 2; }
done

mkdir -p "$WORK/bin" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/fetchtool" ./bench/fetchtool)
pkg=$WORK/bin/pkg
repo=$WORK/repo-$SIZE

# The repository: one tree, compressed twice, added with pkg repo add (which checks it).
if [ ! -s "$repo/index.json" ]; then
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
trap 'kill $server' EXIT
for _ in $(seq 50); do [ -s "$WORK/url" ] && break; sleep 0.1; done
url=$(cat "$WORK/url")

cache=$WORK/cache out=$WORK/out.tar dl=$WORK/download
clean="rm -rf $cache $out $dl; sync"
rm -f "$WORK/results/"*.json
# hyperfine runs one command's runs back to back; on a shared machine whose speed drifts
# over minutes that biases the comparison, so each round runs every command once, in turn,
# and the table gives medians over rounds and the median of each round's ratio.
for z in $ARCHIVES; do
	unz="zstd -d -q"
	[ "$z" = gz ] && unz="gzip -d"
	for round in $(seq 0 "$RUNS"); do # round 0 is the warm-up
		other=()
		[ -n "${PKG_B:-}" ] && other=(-n "pkg fetch (PKG_B)" "$PKG_B --quiet --cache $cache --repo $url fetch tree-$z")
		hyperfine --runs 1 --prepare "$clean" --cleanup "$clean" \
			--export-json "$WORK/results/$z-$round.json" \
			-n "pkg fetch" "$pkg --quiet --cache $cache --repo $url fetch tree-$z" "${other[@]}" \
			-n "curl | ${unz%% *} -d" "curl -sf ${url}tree.tar.$z | $unz > $out" \
			-n "curl -o && ${unz%% *} -d" "curl -sf -o $dl ${url}tree.tar.$z && $unz < $dl > $out" >/dev/null
	done
done

for z in $ARCHIVES; do
	eval "$clean"
	/usr/bin/time -v "$pkg" --quiet --cache "$cache" --repo "$url" fetch "tree-$z" 2> "$WORK/results/rss-$z.txt"
	eval "$clean"
	strace -c -f -o "$WORK/results/strace-$z.txt" "$pkg" --quiet --cache "$cache" --repo "$url" fetch "tree-$z"
done
eval "$clean"

python3 - "$WORK/results" "$RUNS" $ARCHIVES <<'EOF'
import json, re, statistics, sys

res, rounds, zs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
med = statistics.median
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
