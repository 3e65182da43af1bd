#!/bin/bash
# wb.sh KIND N BIN...: N alternating warm rounds of each pkg binary (install + sync -f), ms
k=$1; n=$2; shift 2; d=${D:?set D}/w-$k; P=${WORK:-/var/tmp/pkg-peers}
for r in $(seq $n); do
  line=""
  for b in "$@"; do
    rm -rf $d/pkg-root && sync -f $d
    t0=$(date +%s%N); $b --quiet --root $d/pkg-root --cache $d/pkg-cache --offline sync -f $P/locks/pkg.lock; sync -f $d; t1=$(date +%s%N)
    line="$line $(( (t1-t0)/1000000 ))"
  done
  echo $line
done | awk '{for(i=1;i<=NF;i++){a[i]=a[i]" "$i}; print} END {for(i in a) print "col" i ":" a[i]}'
