#!/bin/bash
# floor.sh KIND N: ubound.sh's alternating warm rounds of bun copyfile, pkg ($PKG), and
# bench/cachefloor twice: cloning pkg's cache entries as pkg does and nothing else, then
# cloning each file whole from a store of files of their own, as bun does (written from
# the cache first, untimed). Run wsetup.sh KIND first. What pkg adds to the first floor is
# its install's structure; what the first adds to the second, the cache's layout.
set -e
k=$1; n=$2; d=${D:?set D}/w-$k; here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
(cd "$here/../../.." && CGO_ENABLED=0 go build -o "$t/cachefloor" ./bench/cachefloor)
rm -rf "$d/store" && "$t/cachefloor" -prepare-store "$d/store" "$d/pkg-cache" && sync -f "$d"
# ubound.sh runs each build as: BUILD --quiet --root ROOT --cache CACHE --offline sync -f LOCK
printf '#!/bin/sh\nexec %s "$5" "$3/pkgs"\n' "$t/cachefloor" >"$t/tar" &&
	printf '#!/bin/sh\nexec %s -store %s "$5" "$3/pkgs"\n' "$t/cachefloor" "$d/store" >"$t/whole" &&
	chmod +x "$t/tar" "$t/whole"
bash "$here/ubound.sh" "$k" "$n" "${PKG:?set PKG to a built pkg}" "$t/tar" "$t/whole"
