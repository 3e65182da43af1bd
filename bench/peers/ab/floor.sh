#!/bin/bash
# floor.sh KIND N: ubound.sh's alternating warm rounds of bun copyfile, pkg ($PKG), and
# bench/cachefloor twice: cloning pkg's cache entries as pkg does and nothing else, then
# cloning each file whole from a store of files of their own, as bun does (written from
# the cache first, untimed). Run wsetup.sh KIND first. What pkg adds to the first floor is
# its install's structure; what the first adds to the second, the cache's layout.
# floor.sh cold KIND N: cold.sh's rounds of bun copyfile, pkg, `pkg fetch` of the lock's
# packages alone, and that fetch followed by the first floor.
set -e
mode=warm
[ "$1" = cold ] && { mode=cold; shift; }
k=$1; n=$2; d=${D:?set D}/w-$k; here=$(cd "$(dirname "$0")" && pwd)
pkg=${PKG:?set PKG to a built pkg}; P=${WORK:-/var/tmp/pkg-peers}
t=$(mktemp -d); trap 'rm -rf "$t" "$d/store"' EXIT
(cd "$here/../../.." && CGO_ENABLED=0 go build -o "$t/cachefloor" ./bench/cachefloor)
if [ $mode = warm ]; then
	rm -rf "$d/store" && "$t/cachefloor" -prepare-store "$d/store" "$d/pkg-cache" && sync -f "$d"
	# ubound.sh runs each build as: BUILD --quiet --root ROOT --cache CACHE --offline sync -f LOCK
	printf '#!/bin/sh\nexec %s "$5" "$3/pkgs"\n' "$t/cachefloor" >"$t/tar"
	printf '#!/bin/sh\nexec %s -store %s "$5" "$3/pkgs"\n' "$t/cachefloor" "$d/store" >"$t/whole"
	chmod +x "$t/tar" "$t/whole"
	bash "$here/ubound.sh" "$k" "$n" "$pkg" "$t/tar" "$t/whole"
	exit
fi
# cold.sh runs each build as: BUILD --quiet --root ROOT --cache CACHE --repo URL sync -f LOCK
python3 -c 'import json, sys
print(" ".join(p["name"] + "@" + p["version"] for p in json.load(open(sys.argv[1]))["packages"]))' "$P/locks/pkg.lock" >"$t/names"
printf '#!/bin/sh\nexec %s --quiet --cache "$5" --repo "$7" fetch $(cat %s)\n' "$pkg" "$t/names" >"$t/fetch"
printf '#!/bin/sh\n%s "$@" && exec %s "$5" "$3/pkgs"\n' "$t/fetch" "$t/cachefloor" >"$t/fetchfloor"
chmod +x "$t/fetch" "$t/fetchfloor"
bash "$here/cold.sh" "$k" "$n" "$pkg" "$t/fetch" "$t/fetchfloor"
