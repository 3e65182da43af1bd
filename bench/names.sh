#!/usr/bin/env bash
# Measures the peak RSS (/usr/bin/time -v) of pkg fetch and pkg install of archives whose
# member names are as long as they may be: "max", as many members as the policy takes with
# names of the name-bytes budget in all, and "long", 120,000 members of 4,095-byte names
# (which the budget refuses: its fetch fails, and its install is not run).
#
# Run from anywhere:   bench/names.sh
# Environment: CASES="max long"  WORK=/var/tmp/pkg-names-bench
#              MEMBERS=1048575 BUDGET=67108864 (the "max" archive: tarutil's maxMembers less
#              the root and maxNameBytes)
# Needs go, zstd and /usr/bin/time (apt-get install zstd time), and about 2 GiB under WORK.
# Results: one line per command on stdout (case, command, exit status, peak RSS in KiB) and
# the /usr/bin/time reports under $WORK/results.
set -euo pipefail

CASES=${CASES:-max long}
WORK=${WORK:-/var/tmp/pkg-names-bench}
MEMBERS=${MEMBERS:-1048575}
BUDGET=${BUDGET:-67108864}
top=$(cd "$(dirname "$0")/.." && pwd)

for tool in go zstd /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench/names.sh: $tool missing (apt-get install zstd time)" >&2; exit 2; }
done
mkdir -p "$WORK/bin" "$WORK/results"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg && go build -o "$WORK/bin/namegen" ./bench/namegen)
pkg=$WORK/bin/pkg

# measure CASE VERB: runs pkg VERB CASE under /usr/bin/time and prints its line.
measure() {
	local c=$1 verb=$2 out=$WORK/results/$1-$2-time.txt rc=0
	/usr/bin/time -v -o "$out" "$pkg" --root "$WORK/$c/root" --cache "$WORK/$c/cache" --repo "$WORK/$c/repo" \
		--quiet "$verb" "$c" 2> "$WORK/results/$c-$verb-stderr.txt" || rc=$?
	echo "$c pkg-$verb exit=$rc maxrss_kib=$(awk -F': ' '/Maximum resident/ {print $2}' "$out")"
	return $rc
}

for c in $CASES; do
	rm -rf "${WORK:?}/$c" && mkdir -p "$WORK/$c/repo"
	case $c in
	max) "$WORK/bin/namegen" -members "$MEMBERS" -budget "$BUDGET" ;;
	long) "$WORK/bin/namegen" -members 120000 -namelen 4095 ;;
	*) echo "bench/names.sh: unknown case $c" >&2; exit 2 ;;
	esac | zstd -q -3 -T0 -o "$WORK/$c/$c.tar.zst"
	# repo add refuses what fetch refuses; the index entry is then written by hand, as a
	# hostile repository would.
	size=$(stat -c %s "$WORK/$c/$c.tar.zst")
	sha=$(sha256sum "$WORK/$c/$c.tar.zst" | cut -d' ' -f1)
	mv "$WORK/$c/$c.tar.zst" "$WORK/$c/repo/"
	printf '{"format":1,"packages":[{"name":"%s","version":"1","archive":"%s.tar.zst","size":%s,"sha256":"%s"}]}\n' \
		"$c" "$c" "$size" "$sha" > "$WORK/$c/repo/index.json"
	echo "$c archive_bytes=$size"
	measure "$c" fetch && measure "$c" install || true
done
