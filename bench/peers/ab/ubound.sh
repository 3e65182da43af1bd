#!/bin/bash
# ubound.sh KIND N BIN...: alternating warm rounds: bun copyfile, then each pkg BIN; cpu/wall ms,
# each build against bun, and each later build against the first (medians of the rounds' ratios)
k=$1; n=$2; shift 2; d=${D:?set D}/w-$k; P=${WORK:-/var/tmp/pkg-peers}
BUN=$P/tools/node_modules/@oven/bun-linux-x64/bin/bun
for r in $(seq $n); do
  line=""
  for b in bun "$@"; do
    if [ $b = bun ]; then
      rm -rf $d/p-bunc/node_modules && sync -f $d
      t0=$(date +%s%N)
      c=$(cd $d/p-bunc && BUN_INSTALL_CACHE_DIR=$d/bun-cache perf stat -x, -e task-clock unshare -n $BUN install --frozen-lockfile --ignore-scripts --no-progress --backend=copyfile 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
    else
      rm -rf $d/pkg-root && sync -f $d
      t0=$(date +%s%N)
      c=$(perf stat -x, -e task-clock $b --quiet --root $d/pkg-root --cache $d/pkg-cache --offline sync -f $P/locks/pkg.lock 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
    fi
    sync -f $d; t1=$(date +%s%N)
    line="$line ${c%.*}/$(( (t1-t0)/1000000 ))"
  done
  echo $line
done | python3 -c '
import sys, statistics
rows=[l.split() for l in sys.stdin if l.strip()]
for l in rows: print(" ".join(l))
n=len(rows[0])
cpu=[[int(r[i].split("/")[0]) for r in rows] for i in range(n)]
wall=[[int(r[i].split("/")[1]) for r in rows] for i in range(n)]
for i in range(n):
    rc=[cpu[i][j]/cpu[0][j] for j in range(len(rows))]
    rw=[wall[i][j]/wall[0][j] for j in range(len(rows))]
    print("col%d cpu med %d wall med %d  cpu/bun med %.3f wall/bun med %.3f" % (i+1, statistics.median(cpu[i]), statistics.median(wall[i]), statistics.median(rc), statistics.median(rw)))
# each later build against the first (column 2): medians of the rounds ratios, rounds faster
for i in range(2, n):
    rc=[cpu[i][j]/cpu[1][j] for j in range(len(rows))]
    rw=[wall[i][j]/wall[1][j] for j in range(len(rows))]
    print("col%d/col2 cpu med %.3f wall med %.3f  faster in %d of %d" % (i+1, statistics.median(rc), statistics.median(rw), sum(x < 1 for x in rw), len(rows)))
'
