#!/bin/bash
# cold.sh KIND N BIN...: N rounds, order turning: bun copyfile cold, then each pkg BIN cold over HTTP (install + sync -f), ms; medians, ratio to bun
k=$1; n=$2; shift 2; d=${D:?set D}/w-$k; P=${WORK:-/var/tmp/pkg-peers}
BUN=$P/tools/node_modules/@oven/bun-linux-x64/bin/bun
bins=(bun "$@"); nb=${#bins[@]}
for r in $(seq $n); do
  declare -A res=()
  for i in $(seq 0 $((nb-1))); do
    j=$(( (i + r) % nb )); b=${bins[$j]}
    if [ $b = bun ]; then
      rm -rf $d/p-bunc/node_modules $d/bunc2 && sync -f $d
      t0=$(date +%s%N); (cd $d/p-bunc && BUN_INSTALL_CACHE_DIR=$d/bunc2 $BUN install --frozen-lockfile --ignore-scripts --no-progress --backend=copyfile >/dev/null 2>&1) || echo FAIL bun >&2; sync -f $d; t1=$(date +%s%N)
    else
      rm -rf $d/pkg-root $d/pkgc2 && sync -f $d
      t0=$(date +%s%N); $b --quiet --root $d/pkg-root --cache $d/pkgc2 --repo $(cat $P/url)pkg/ sync -f $P/locks/pkg.lock || echo FAIL $b >&2; sync -f $d; t1=$(date +%s%N)
    fi
    res[$j]=$(( (t1-t0)/1000000 ))
  done
  line=""; for i in $(seq 0 $((nb-1))); do line="$line ${res[$i]}"; done; echo $line
done | python3 -c "
import sys,statistics
rows=[list(map(int,l.split())) for l in sys.stdin]
for r in rows: print(*r)
cols=list(zip(*rows))
print('rounds', len(rows), 'medians', *[statistics.median(c) for c in cols], 'ratio to first', *['%.3f'%statistics.median([r[i]/r[0] for r in rows]) for i in range(len(cols))])
"
