#!/usr/bin/env bash
# Cross-version sharing in the cache: three consecutive releases of a real package, the Go
# module zips of golang.org/x/text, fetched one after the other into one cache on a fresh
# loop-mounted XFS and btrfs. Shows, per filesystem:
#
#   space   the disk space the cache takes (the filesystem's used blocks, after sync, before
#           and after the fetches), against the bytes of the distinct files of the three
#           releases (by sha256) and against their sum; du, which counts a shared block in
#           every file that holds it, and the tars' apparent size, for comparison
#   install the first and last releases installed into two roots: the share of their files'
#           bytes that FIEMAP reports on the very blocks of the cache tar at the member's
#           place, and pkg verify (by extent maps) passing
#   prune   with the roots holding the first and last releases, pkg cache prune removes the
#           middle one: the space freed against what only its tar held (its extents that
#           FIEMAP does not report shared); then a third root installs the last release
#           offline and pkg verify --full passes
#   time    pkg fetch of the second release, sync included, into a cache that holds the
#           first under the same name (shared) and under another name (nothing shared),
#           alternating, RUNS rounds, medians
#
# Run as root from anywhere:   bench/versions.sh
# Environment: FS="xfs btrfs"  MODULE=golang.org/x/text  VERSIONS="v0.14.0 v0.15.0 v0.16.0"
#              RUNS=7  WORK=/var/tmp/pkg-versions (module zips kept in $WORK/dl; never commit)
# Needs go (and the Go module proxy, the first time), python3, mkfs.xfs, mkfs.btrfs.
# Exits 1 when the cache takes more than 1.2x the distinct bytes, an install is not shared,
# a verify fails or the prune frees other than what only the middle release held.
set -euo pipefail

FS=${FS:-xfs btrfs}
MODULE=${MODULE:-golang.org/x/text}
VERSIONS=${VERSIONS:-v0.14.0 v0.15.0 v0.16.0}
RUNS=${RUNS:-7}
WORK=${WORK:-/var/tmp/pkg-versions}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/bench/loopfs.sh"
me=bench/versions.sh

[ "$(id -u)" = 0 ] || { echo "$me: needs root (mount, mkfs)" >&2; exit 2; }
for tool in go python3 mkfs.xfs mkfs.btrfs; do
	command -v "$tool" >/dev/null || { echo "$me: $tool missing" >&2; exit 2; }
done
read -r -a vs <<<"$VERSIONS"
[ "${#vs[@]}" = 3 ] || { echo "$me: VERSIONS must name three releases" >&2; exit 2; }

mkdir -p "$WORK/bin" "$WORK/dl"
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg)
pkg=$WORK/bin/pkg
zips=()
for v in "${vs[@]}"; do
	z=$WORK/dl/$(basename "$MODULE")-$v.zip
	[ -s "$z" ] || {
		src=$(cd "$WORK/dl" && GOMODCACHE=$WORK/dl/gomod GOFLAGS=-modcacherw go mod download -json "$MODULE@$v" |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["Zip"])')
		cp "$src" "$z"
	}
	zips+=("$z")
done

# Python helpers: the files of the zips, and FIEMAP.
cat >"$WORK/versions.py" <<'EOF'
import fcntl, hashlib, os, struct, sys, zipfile

def extents(path):
    """(logical, physical, length, shared) of each extent of the file at path."""
    out, start = [], 0
    with open(path, 'rb') as f:
        while True:
            n = 64
            buf = bytearray(struct.pack('=QQIIII', start, 2**64 - 1 - start, 1, 0, n, 0) + b'\0' * 56 * n)
            fcntl.ioctl(f.fileno(), 0xC020660B, buf)
            mapped = struct.unpack_from('=I', buf, 20)[0]
            if mapped == 0:
                return out
            for i in range(mapped):
                lo, ph, ln, _, _, fl = struct.unpack_from('=QQQQQI', buf, 32 + 56 * i)
                out.append((lo, ph, ln, bool(fl & 0x2000)))
                start = lo + ln
                if fl & 1:
                    return out

def files(args):
    """Sum and distinct bytes of the regular files of the zips."""
    total, distinct = 0, {}
    for z in args:
        with zipfile.ZipFile(z) as zf:
            for i in zf.infolist():
                if not i.is_dir():
                    d = zf.read(i)
                    total += len(d)
                    distinct[hashlib.sha256(d).digest()] = len(d)
    print(total, sum(distinct.values()))

def own(args):
    """Bytes of the file's extents that are not shared."""
    print(sum(ln for _, _, ln, sh in extents(args[0]) if not sh))

def physical(es, at):
    for lo, ph, ln, _ in es:
        if lo <= at < lo + ln:
            return ph + at - lo
    return -1

def installed(args):
    """Bytes of the installed files under root/pkgs/name, and of those on the cache tar's
    blocks at their member's place: each 4 KiB block compared by physical address."""
    tar, root = args[0], args[1]
    import tarfile
    members = {}
    with tarfile.open(tar) as tf:
        for m in tf:
            if m.isreg():
                members[m.name] = (m.offset_data, m.size)
    tes = extents(tar)
    total = same = 0
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p) or rel not in members:
                continue
            off, size = members[rel]
            total += size
            fes = extents(p)
            for at in range(0, size - size % 4096, 4096):
                if physical(fes, at) >= 0 and physical(fes, at) == physical(tes, off + at):
                    same += 4096
    print(total, same)

globals()[sys.argv[1]](sys.argv[2:])
EOF
py() { python3 "$WORK/versions.py" "$@"; }
read -r sum distinct < <(py files "${zips[@]}")
echo "$MODULE ${vs[*]}: files $((sum >> 10)) KiB in all, $((distinct >> 10)) KiB distinct"

mnt=$WORK/mnt
cleanup() { umount "$mnt" 2>/dev/null || true; rm -f "$WORK"/*.img; }
trap cleanup EXIT
# used prints the bytes used on $mnt once they settle: XFS frees an unlinked file's blocks in
# the background (deferred inode inactivation), after sync returns.
used() {
	local a b
	sync
	b=$(df -B1 --output=used "$mnt" | tail -1)
	for _ in $(seq 20); do
		sleep 0.5
		sync
		a=$b b=$(df -B1 --output=used "$mnt" | tail -1)
		[ "$a" != "$b" ] || break
	done
	echo "$b" | tr -d ' '
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
fail=0
bad() { echo "  FAIL: $*"; fail=1; }

for kind in $FS; do
	loopfs "$kind" "$WORK/$kind.img" 4G "$mnt"
	repo=$WORK/repo-$kind C=$mnt/cache
	rm -rf "$repo"
	# P ARGS...: pkg on this cache and repository (an unsigned local one is only a note, which
	# --quiet hides).
	P() { "$pkg" --quiet --cache "$C" --repo "$repo" "$@"; }
	for i in 0 1 2; do
		P repo add "$repo" "${zips[$i]}" --name text --version "${vs[$i]#v}"
	done
	P repo add "$repo" "${zips[0]}" --name text-alone --version "${vs[0]#v}"
	# sha VERSION: the sha256 of text VERSION, which names its cache entry.
	sha() { python3 -c 'import json,sys; print(*[p["sha256"] for p in json.load(open(sys.argv[1]))["packages"] if p["name"] == "text" and p["version"] == sys.argv[2]])' "$repo/index.json" "$1"; }
	echo "$kind:"

	# space
	before=$(used)
	for v in "${vs[@]}"; do P --root "$mnt/r0" fetch "text=${v#v}"; done
	cache=$(($(used) - before))
	dus=$(du -sB1 "$C/tars" | cut -f1)
	apparent=$(du -sb --apparent-size "$C/tars" | cut -f1)
	echo "  space: cache $((cache >> 10)) KiB on disk = $(python3 -c "print(f'{$cache/$distinct:.3f}')")x the distinct files," \
		"$(python3 -c "print(f'{$cache/$sum:.3f}')")x their sum; du $((dus >> 10)) KiB, tars $((apparent >> 10)) KiB apparent"
	python3 -c "import sys; sys.exit(0 if $cache <= 1.2 * $distinct else 1)" || bad "cache takes more than 1.2x the distinct bytes"
	[ "$kind" = btrfs ] && btrfs filesystem du -s "$C/tars" | sed 's/^/  btrfs du: /'

	# install
	P --root "$mnt/r1" install "text=${vs[0]#v}"
	P --root "$mnt/r3" install "text=${vs[2]#v}"
	for r in 1 3; do
		v=${vs[$((r - 1))]#v}
		tar=$C/tars/$(sha "$v").tar
		read -r total same < <(py installed "$tar" "$mnt/r$r/pkgs/text")
		echo "  install $v: $((same >> 10)) of $((total >> 10)) KiB on the cache tar's blocks ($(python3 -c "print(f'{100*$same/$total:.1f}')")%)"
		python3 -c "import sys; sys.exit(0 if $same >= 0.9 * $total else 1)" || bad "install of $v not shared with the cache"
		P --root "$mnt/r$r" verify >/dev/null || bad "pkg verify of $v"
	done

	# prune
	mid=$C/tars/$(sha "${vs[1]#v}").tar
	alone=$(py own "$mid")
	before=$(used)
	P --root "$mnt/r1" cache prune >/dev/null
	freed=$((before - $(used)))
	[ ! -e "$mid" ] || bad "prune kept ${vs[1]}"
	echo "  prune ${vs[1]#v}: freed $((freed >> 10)) KiB; only its tar held $((alone >> 10)) KiB"
	python3 -c "import sys; sys.exit(0 if abs($freed - $alone) <= max(1 << 20, $alone // 10) else 1)" || bad "prune freed $freed bytes, want $alone"
	P --root "$mnt/r4" --offline install "text=${vs[2]#v}"
	P --root "$mnt/r4" verify --full >/dev/null || bad "pkg verify --full after the prune"
	P --root "$mnt/r1" verify --full >/dev/null || bad "pkg verify --full of ${vs[0]#v} after the prune"

	# time
	C2=$mnt/cache2 mid_sha=$(sha "${vs[1]#v}")
	P --cache "$C2" --root "$mnt/r0" fetch "text-alone=${vs[0]#v}"
	P --root "$mnt/r0" fetch "text=${vs[1]#v}"
	shared=() alone=()
	for r in $(seq 1 "$RUNS"); do
		for c in "$C" "$C2"; do
			rm -f "$c/tars/$mid_sha.tar" "$c/tars/$mid_sha.idx"
			sync
			t0=$(date +%s.%N)
			P --cache "$c" --root "$mnt/r0" fetch "text=${vs[1]#v}"
			sync
			t=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.3f}')")
			if [ "$c" = "$C" ]; then shared+=("$t"); else alone+=("$t"); fi
		done
	done
	echo "  time: fetch ${vs[1]#v} + sync: shared $(printf '%s\n' "${shared[@]}" | median) s," \
		"nothing to share $(printf '%s\n' "${alone[@]}" | median) s (medians of $RUNS, $(uptime | sed 's/.*load/load/'))"
	umount "$mnt"
	rm -f "$WORK/$kind.img"
done
exit $fail
