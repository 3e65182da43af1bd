#!/usr/bin/env bash
# Compares tarutil.Align with a plain io.CopyBuffer of the same bytes to the same kind of file
# (BenchmarkAlign and BenchmarkCopyBaseline, 40 files of 8 MiB and 30,000 of 1 KiB), in
# rounds that run each benchmark once in turn, so that a machine whose speed drifts favours
# neither; prints medians over rounds and the median of each round's throughput ratio, and
# the best ratio the machine allows Align with its per-file sha256 (BenchmarkDigestBaseline).
#
# Run from anywhere:   bench/align.sh
# Environment: ROUNDS=7  BENCHTIME=5x  TMPDIR (where the output files go; default /tmp)
set -euo pipefail

ROUNDS=${ROUNDS:-7}
[ "$ROUNDS" -ge 1 ] || { echo "bench/align.sh: ROUNDS must be at least 1" >&2; exit 2; }
BENCHTIME=${BENCHTIME:-5x}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$top" && go test -c -o "$bin/tarutil.test" ./tarutil)

cd "$top/tarutil"
for _ in $(seq "$ROUNDS"); do
	for b in 'Align/40x8MiB' 'CopyBaseline/40x8MiB' 'DigestBaseline/40x8MiB' 'Align/30000x1KiB' 'CopyBaseline/30000x1KiB'; do
		out=$("$bin/tarutil.test" -test.run '^$' -test.bench "^Benchmark$b\$" -test.benchtime "$BENCHTIME") ||
			{ echo "$out" >&2; exit 1; }
		grep '^Benchmark' <<<"$out"
	done
done > "$bin/rounds.txt"

python3 - "$bin/rounds.txt" "$(nproc)" <<'EOF'
import re, statistics, sys

runs = {}  # benchmark -> one dict of metrics per round
for line in open(sys.argv[1]):
    f = line.split()
    name = re.sub(r"-\d+$", "", f[0])
    runs.setdefault(name, []).append({f[i + 1]: float(f[i]) for i in range(2, len(f) - 1, 2)})
med = statistics.median
cols = ("ns/op", "MB/s", "B/member", "GCs/op", "allocs/op")
print("| benchmark | " + " | ".join(cols) + " | throughput / copy's |")
print("|---|" + "---:|" * (len(cols) + 1))
for size in ("40x8MiB", "30000x1KiB"):
    a, c = runs[f"BenchmarkAlign/{size}"], runs[f"BenchmarkCopyBaseline/{size}"]
    ratio = med(y["ns/op"] / x["ns/op"] for x, y in zip(a, c))
    for name, r in ((f"Align/{size}", a), (f"CopyBaseline/{size}", c)):
        vals = [f"{med(x[k] for x in r):.2f}" if k in r[0] else "" for k in cols]
        last = f"{ratio:.2f}" if name.startswith("Align") else ""
        print(f"| {name} | " + " | ".join(vals) + f" | {last} |")

# Align's per-file sha256 is work the copy does not do: however it spreads the copy and the
# digests over the cores, Align needs (copy + digest) / cores, and the copy is one stream.
d, c = runs["BenchmarkDigestBaseline/40x8MiB"], runs["BenchmarkCopyBaseline/40x8MiB"]
dig, cp = med(x["ns/op"] for x in d), med(x["ns/op"] for x in c)
cores = int(sys.argv[2])
bound = max(cp, (dig + cp) / cores)
print(f"\nsha256 of the 40x8MiB bytes, in cache: {dig / 1e6:.1f} ms/op. With the copy's {cp / 1e6:.1f} ms on "
      f"{cores} cores, Align needs at least {bound / 1e6:.1f} ms/op: at most {cp / bound:.2f} of the copy's throughput.")
EOF
