#!/bin/bash
# wsetup.sh KIND: a loop KIND filesystem at $D/w-KIND whose bun and pkg stores are filled
# (warm) from the peers registry: WORK (bench/peers.sh's, /var/tmp/pkg-peers) must hold a
# finished peers.sh run's tools and locks, and WORK/url the URL of a server of WORK/www
# (bench/fetchtool serve WORK/www WORK/url), the locks made for that URL (serve.sh).
set -e
. "$(dirname "$0")/../../loopfs.sh"
k=$1; d=${D:?set D}/w-$k
loopfs $k ${D:?set D}/w$k.img 8G $d
P=${WORK:-/var/tmp/pkg-peers}; L=$P/locks
BUN=$P/tools/node_modules/@oven/bun-linux-x64/bin/bun
mkdir -p $d/p-bunc && cp $L/bun/* $d/p-bunc/ && sed -i "s#http://127.0.0.1:[0-9]*/#$(cat $P/url)#g" $d/p-bunc/bun.lock && echo "registry=$(cat $P/url)" > $d/p-bunc/.npmrc
(cd $d/p-bunc && BUN_INSTALL_CACHE_DIR=$d/bun-cache $BUN install --frozen-lockfile --ignore-scripts --no-progress --backend=copyfile) >/dev/null 2>&1 || echo bun fill failed
${PKG:?set PKG to a built pkg} --quiet --root $d/pkg-root --cache $d/pkg-cache sync -f $L/pkg.lock
