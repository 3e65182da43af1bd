#!/bin/bash
# serve.sh: starts bench/fetchtool serving WORK/www (bench/peers.sh's work directory, after a
# run of it) on 127.0.0.1, its URL in WORK/url, and makes the registry, the locks and pkg's
# repository of WORK for that URL again, as peers.sh does for its own server. Stop it with
# pkill -f "fetchtool serve". PKG: a built pkg.
set -e
WORK=${WORK:-/var/tmp/pkg-peers}
here=$(cd "$(dirname "$0")/.." && pwd)
dl=$WORK/dl www=$WORK/www locks=$WORK/locks
BUN=$WORK/tools/node_modules/@oven/bun-linux-x64/bin/bun
export HOME=$WORK/home
rm -f "$WORK/url"
(cd "$WORK" && exec setsid bin/fetchtool serve www url) </dev/null >/dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$WORK/url" ] && break; sleep 0.1; done
url=$(cat "$WORK/url")
mkdir -p "$www" "$locks"
python3 "$here/peers.py" registry "$here/package-lock.json" "$dl/tgz" "$www" "$url"
for t in npm bun pnpm; do mkdir -p "$locks/$t" && cp "$here/package.json" "$locks/$t/" && echo "registry=$url" >"$locks/$t/.npmrc"; done
python3 "$here/peers.py" resolved "$here/package-lock.json" "$url-/" "$locks/npm/package-lock.json"
cp "$locks/npm/package-lock.json" "$locks/bun/"
(cd "$locks/bun" && "$BUN" install --lockfile-only && rm package-lock.json) >/dev/null
mkdir -p "$www/pkg"
npm_config_cache=$dl/npmcache "${PKG:?set PKG to a built pkg}" --quiet repo add "$www/pkg" --from "$locks/npm/package-lock.json" --lock "$locks/pkg.lock"
echo "serving $WORK/www at $url"
