#!/usr/bin/env bash
# Real-world check: real artifacts published with pkg repo add, installed into a root on a
# loop-mounted XFS (reflink), compared with what the ecosystem's own tool extracts of the same
# artifact, their commands run, and their installs timed.
#
#   kernel  linux-source-6.1.tar.xz, the upstream-style tarball inside Debian's linux-source-6.1
#           .deb; against tar -xJf
#   jq      Debian's jq, libjq1 and libonig5 .debs as they are (jq depends on libjq1, libjq1 on
#           libonig5, both --lib usr/lib/x86_64-linux-gnu); against dpkg-deb -x; bin/jq runs
#           with the host's libjq and libonig hidden (and a plain symlink to it must not)
#   npm     npm pack of prettier (--bin prettier=package/bin/prettier.cjs) and typescript (tsc,
#           tsserver); against tar -xzf; node runs bin/prettier and bin/tsc
#   gomod   the module zip of golang.org/x/text from the Go proxy; against unzip
#
# A tree matches when names, types, modes, symlink targets, mtimes (of every member the
# archive lists, but an npm package's: a directory only made because a file is under it has
# no recorded time) and
# contents all match (`find -printf` listings, then diff -r; directory times against bsdtar's
# extraction, see compare). pkg makes a declared command's file executable, as npm does, so
# the reference gets the same chmod. Each install is timed cold (empty cache and root) and
# warm (cache kept, empty root), against the extraction of the same artifact on the same XFS,
# each with a sync inside the timed command (hyperfine, medians of $RUNS); FIEMAP (filefrag
# -v) shows how much of each case's biggest file shares its blocks.
#
# Run as root from anywhere:   bench/realworld.sh
# Environment: WORK=/var/tmp/pkg-realworld (downloads kept under $WORK/dl and reused; never
#              commit it)  CASES="kernel jq npm gomod"  RUNS=5  TIME=1 (0 skips the timings)
# Needs apt-get, dpkg-deb, bsdtar (libarchive-tools), npm, node, go, tar, xz, unzip, hyperfine,
# mkfs.xfs, filefrag, unshare, python3, and network access for the first run. Prints a table;
# exits 1 if any case fails.
set -euo pipefail

WORK=${WORK:-/var/tmp/pkg-realworld}
CASES=${CASES:-kernel jq npm gomod}
RUNS=${RUNS:-5}
TIME=${TIME:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
me=bench/realworld.sh
libdir=usr/lib/x86_64-linux-gnu

[ "$(id -u)" = 0 ] || { echo "$me: needs root (mount, mkfs, unshare)" >&2; exit 2; }
for tool in apt-get dpkg-deb bsdtar npm node go tar xz unzip hyperfine mkfs.xfs filefrag unshare python3; do
	command -v "$tool" >/dev/null || { echo "$me: $tool missing" >&2; exit 2; }
done
# unzip reads a zip's MS-DOS times as local time, pkg (Go's archive/zip) as UTC.
export TZ=UTC LC_ALL=C

dl=$WORK/dl log=$WORK/log
mkdir -p "$WORK/bin" "$dl" "$log"
rm -f "$log"/*
(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg)
pkg=$WORK/bin/pkg

# Artifacts, fetched once.
(
	cd "$dl"
	ls linux-source-6.1_*.deb jq_*.deb libjq1_*.deb libonig5_*.deb >/dev/null 2>&1 ||
		apt-get download linux-source-6.1 jq libjq1 libonig5
	[ -s linux-source-6.1.tar.xz ] ||
		{ dpkg-deb --fsys-tarfile linux-source-6.1_*.deb | tar -xO ./usr/src/linux-source-6.1.tar.xz > k.tmp && mv k.tmp linux-source-6.1.tar.xz; }
	[ -s prettier-3.6.2.tgz ] && [ -s typescript-5.9.3.tgz ] || npm pack --silent prettier@3.6.2 typescript@5.9.3 >/dev/null
	[ -s text-v0.44.0.zip ] || {
		zip=$(GOMODCACHE=$dl/gomod GOFLAGS=-modcacherw GOPROXY=${GOPROXY:-https://proxy.golang.org} \
			go mod download -json golang.org/x/text@v0.44.0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["Zip"])')
		cp "$zip" text-v0.44.0.zip
	}
) >"$log/download" 2>&1 || { cat "$log/download" >&2; exit 1; }
deb() { ls "$dl/$1"_*.deb; }

# The XFS: made here, unmounted and removed on exit, whatever happens.
img=$WORK/xfs.img mnt=$WORK/mnt
cleanup() {
	if mountpoint -q "$mnt"; then umount "$mnt" || umount -l "$mnt"; fi
	rm -f "$img"
}
trap cleanup EXIT
mkdir -p "$mnt"
if mountpoint -q "$mnt"; then umount "$mnt"; fi
rm -f "$img" && truncate -s 16G "$img"
mkfs.xfs -q -f -m reflink=1 "$img"
mount -o loop "$img" "$mnt"
R=$mnt/root C=$mnt/cache ref=$mnt/ref repo=$WORK/repo
rm -rf "$repo" && mkdir -p "$repo" "$ref"
P() { "$pkg" --quiet --root "$R" --cache "$C" --repo "$repo" "$@"; }
# add CASE ARCHIVE FLAGS...: pkg repo add, its errors kept for the case's status.
add() {
	local c=$1
	shift
	P repo add "$repo" "$@" 2>>"$log/$c.add" || { fail "$c" "repo add: $(head -c 300 "$log/$c.add")"; return 1; }
}

declare -A status files cold warm extract extractname
fail() { # fail CASE WHAT: records the first failure of a case, names its log
	[ -n "${status[$1]:-}" ] || status[$1]="FAIL: $2"
	echo "$me: $1: $2 (logs in $log)" >&2
}

# listing DIR DIRTIMES: one line per entry below DIR: path, type, mode, link target, mtime (a
# directory's only when DIRTIMES is 1; none when it is -: an npm package keeps the time of its
# install, as npm leaves it, docs/archives.md). DIR itself is left out: a package's directory
# is pkg's, made by its install, whatever mode and time an archive's "./" gives.
listing() {
	(cd "$1" && case $2 in
	1) find . -mindepth 1 -printf '%p %y %m %l %T@\n' ;;
	-) find . -mindepth 1 \( -type d -printf '%p %y %m\n' \) -o -printf '%p %y %m %l\n' ;;
	*) find . -mindepth 1 \( -type d -printf '%p %y %m\n' \) -o -printf '%p %y %m %l %T@\n' ;;
	esac) | sort
}
# tree NAME: where the installed package NAME's files are: pkgs/NAME, or an npm package's
# (NAME@VERSION) instance in the node_modules layout (docs/javascript.md).
tree() {
	case $1 in
	*@*) echo "$R/lib/node_modules/.pnpm/$1/node_modules/${1%@*}" ;;
	*) echo "$R/pkgs/$1" ;;
	esac
}
# compare CASE NAME REFDIR DIRTIMES [GOT]: the installed package NAME (its tree GOT, else
# pkgs/NAME) against REFDIR.
# dpkg-deb -x and GNU tar -x set a directory's time once past its members, so a member that
# comes later in it (libjq1's symlink libjq.so.1 after usr/share/; 125 of the kernel's
# directories) leaves it the extraction's time. bsdtar -x sets directory times last, as pkg
# does, so directory times are compared with bsdtar's extraction ($REFDIR.tar) of the same tar,
# the rest with the ecosystem tool's.
compare() {
	local got=${5:-$R/pkgs/$2}
	if ! diff <(listing "$3" "$4") <(listing "$got" "$4") >"$log/$1-$2.listing.diff"; then
		fail "$1" "$2: names, types, modes, targets or mtimes differ from the reference ($(wc -l <"$log/$1-$2.listing.diff") diff lines)"
		return 1
	fi
	if ! diff -r --no-dereference "$3" "$got" >"$log/$1-$2.content.diff"; then
		fail "$1" "$2: contents differ from the reference"
		return 1
	fi
	[ "$4" = 0 ] && [ -e "$3.tar" ] || files[$1]=$((${files[$1]:-0} + $(find "$got" -type f | wc -l)))
}
# expect CASE WHAT WANT CMD...: CMD's stdout must be WANT.
expect() {
	local c=$1 what=$2 want=$3 got
	shift 3
	got=$("$@" 2>"$log/$c.stderr") || true
	if [ "$got" != "$want" ]; then
		fail "$c" "$what: got '$got', want '$want' ($(head -c 200 "$log/$c.stderr"))"
		return 1
	fi
	echo "$c: $what: $got" >>"$log/commands"
}

# timing CASE EXTRACT-NAME EXTRACT-CMD NAMES...: cold and warm installs of NAMES against
# EXTRACT-CMD, which extracts into $mnt/x.
timing() {
	local c=$1 name=$2 x=$3
	shift 3
	[ "$TIME" = 1 ] || return 0
	local inst="$pkg --quiet --root $R --cache $C --repo $repo install $*"
	hyperfine -N --style none --runs "$RUNS" --export-json "$log/$c.time.json" \
		-n cold --prepare "sh -c 'rm -rf $R $C; sync -f $mnt'" "$inst" \
		-n warm --prepare "sh -c 'rm -rf $R; sync -f $mnt'" "$inst" \
		-n extract --prepare "sh -c 'rm -rf $mnt/x; mkdir $mnt/x; sync -f $mnt'" "sh -c '$x && sync -f $mnt/x'" \
		>"$log/$c.time" 2>&1 || { fail "$c" "timing (see $c.time)"; return 1; }
	read -r cold[$c] warm[$c] extract[$c] < <(python3 -c '
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
print(*(f"{r[k]:.3f}" for k in ("cold", "warm", "extract")))' "$log/$c.time.json")
	extractname[$c]=$name
	rm -rf "$mnt/x"
}

# fiemap CASE NAMES...: how much of the biggest file installed for NAMES (tree) shares its blocks
# (filefrag -v: "ext: logical_offset: physical_offset: length: expected: flags:").
fiemap() {
	local c=$1 big
	shift
	big=$(for n; do find "$(tree "$n")" -type f -printf '%s %p\n'; done | sort -n | tail -1 | cut -d' ' -f2-)
	filefrag -v "$big" >"$log/$c.filefrag"
	echo "$c: ${big#"$R"/} ($(stat -c %s "$big") bytes): $(awk -F: '$1 ~ /^ *[0-9]+$/ {
		n++; b += $4; if ($0 ~ /shared/) { s++; sb += $4 } }
		END { printf "%d of %d extents shared, %d of %d blocks", s, n, sb, b }' "$log/$c.filefrag")" >>"$log/fiemap"
}

case_kernel() {
	local tx=$dl/linux-source-6.1.tar.xz
	add kernel "$tx" --name linux-source --version 6.1.192 || return
	mkdir -p "$ref/kernel" "$ref/kernel.tar" && tar -xJf "$tx" -C "$ref/kernel" && bsdtar -xJf "$tx" -C "$ref/kernel.tar"
	P install linux-source 2>"$log/kernel.install" || { fail kernel "install: $(head -c 300 "$log/kernel.install")"; return; }
	compare kernel linux-source "$ref/kernel" 0 && compare kernel linux-source "$ref/kernel.tar" 1 || return
	rm -rf "$ref/kernel" "$ref/kernel.tar"
	fiemap kernel linux-source
	timing kernel "tar -xJf" "tar -xJf $tx -C $mnt/x" linux-source
}

case_jq() {
	add jq "$(deb libonig5)" --lib "$libdir" --depends '' && add jq "$(deb libjq1)" --lib "$libdir" --depends libonig5 &&
		add jq "$(deb jq)" --depends libjq1 --bin usr/bin/jq || return
	# Directory times are compared with bsdtar's extraction of the data.tar (see compare).
	for p in jq libjq1 libonig5; do
		mkdir -p "$ref/$p" "$ref/$p.tar" && dpkg-deb -x "$(deb $p)" "$ref/$p" &&
			dpkg-deb --fsys-tarfile "$(deb $p)" | bsdtar -x -C "$ref/$p.tar"
	done
	P install jq 2>"$log/jq.install" || { fail jq "install: $(head -c 300 "$log/jq.install")"; return; }
	for p in jq libjq1 libonig5; do
		compare jq "$p" "$ref/$p" 0 && compare jq "$p" "$ref/$p.tar" 1 || return
	done
	fiemap jq jq libjq1 libonig5
	# The host has its own libjq and libonig, so that hiding them shows whose are loaded.
	dpkg -s libjq1 libonig5 >/dev/null 2>&1 || apt-get install -y -q libjq1 libonig5 >"$log/jq.apt" 2>&1 ||
		{ fail jq "apt-get install libjq1 libonig5"; return; }
	local want
	want=$("$ref/jq/usr/bin/jq" --version)
	expect jq "bin/jq --version" "$want" "$R/bin/jq" --version || return
	# With the host's libjq and libonig replaced by empty files, only pkg's wrapper finds them.
	local hide="for l in /usr/lib/x86_64-linux-gnu/libjq.so.1 /usr/lib/x86_64-linux-gnu/libonig.so.5; do
		[ -e \$l ] || { echo host lacks \$l >&2; exit 3; }; mount --bind /dev/null \$l; done"
	local filter='[.[] | select(.n | test("^o.i")) | .n * 2] | join(",")'
	expect jq "bin/jq filter, host libs hidden" '"onigonig"' \
		unshare -m sh -c "$hide; echo '[{\"n\":\"onig\"},{\"n\":\"jq\"}]' | \"\$1\" -c \"\$2\"" - "$R/bin/jq" "$filter" || return
	ln -sfn "$R/pkgs/jq/usr/bin/jq" "$mnt/jq-symlink"
	if unshare -m sh -c "$hide; \"\$1\" --version" - "$mnt/jq-symlink" >"$log/jq.symlink" 2>&1; then
		fail jq "a plain symlink to jq ran with the host's libraries hidden: hiding proves nothing"
		return
	fi
	echo "jq: plain symlink, host libs hidden: $(head -c 200 "$log/jq.symlink")" >>"$log/commands"
	timing jq "dpkg-deb -x (3 .debs)" \
		"for d in $(deb jq) $(deb libjq1) $(deb libonig5); do dpkg-deb -x \$d $mnt/x || exit 1; done" jq
}

case_npm() {
	add npm "$dl/prettier-3.6.2.tgz" --name prettier --version 3.6.2 --bin prettier=package/bin/prettier.cjs &&
		add npm "$dl/typescript-5.9.3.tgz" --name typescript --version 5.9.3 \
			--bin tsc=package/bin/tsc --bin tsserver=package/bin/tsserver || return
	mkdir -p "$ref/prettier" "$ref/typescript"
	tar -xzf "$dl/prettier-3.6.2.tgz" -C "$ref/prettier" && chmod a+x "$ref/prettier/package/bin/prettier.cjs"
	tar -xzf "$dl/typescript-5.9.3.tgz" -C "$ref/typescript"
	P install prettier typescript 2>"$log/npm.install" || { fail npm "install: $(head -c 300 "$log/npm.install")"; return; }
	# An npm package's tree (tree) is the tarball's package/ directory.
	compare npm prettier "$ref/prettier/package" - "$(tree prettier@3.6.2)" &&
		compare npm typescript "$ref/typescript/package" - "$(tree typescript@5.9.3)" || return
	fiemap npm prettier@3.6.2 typescript@5.9.3
	expect npm "bin/prettier --version" 3.6.2 "$R/bin/prettier" --version || return
	expect npm "bin/prettier formats" 'const a = { b: 1 };' \
		sh -c 'echo "const a={b:1}" | "$1" --stdin-filepath x.js' - "$R/bin/prettier" || return
	expect npm "bin/tsc --version" "Version 5.9.3" "$R/bin/tsc" --version || return
	[ -x "$R/bin/tsserver" ] || { fail npm "bin/tsserver missing"; return; }
	timing npm "tar -xzf (2 .tgz)" \
		"tar -xzf $dl/prettier-3.6.2.tgz -C $mnt/x && tar -xzf $dl/typescript-5.9.3.tgz -C $mnt/x" prettier typescript
}

case_gomod() {
	local z=$dl/text-v0.44.0.zip
	add gomod "$z" --name golang.org-x-text --version v0.44.0 || return
	mkdir -p "$ref/gomod" && unzip -q "$z" -d "$ref/gomod"
	P install golang.org-x-text 2>"$log/gomod.install" || { fail gomod "install: $(head -c 300 "$log/gomod.install")"; return; }
	compare gomod golang.org-x-text "$ref/gomod" 0 || return
	fiemap gomod golang.org-x-text
	timing gomod unzip "unzip -q $z -d $mnt/x" golang.org-x-text
}

for c in $CASES; do
	echo "$me: $c" >&2
	"case_$c" || true
	[ -n "${status[$c]:-}" ] || status[$c]=ok
done
if [ -d "$R/pkgs" ]; then
	P verify >"$log/verify" 2>&1 || echo "$me: pkg verify: $(tail -1 "$log/verify")" >&2
fi

echo
echo "| case | files | status | pkg install cold s | warm s | extract s | extracted by |"
echo "|---|---:|---|---:|---:|---:|---|"
rc=0
for c in $CASES; do
	echo "| $c | ${files[$c]:--} | ${status[$c]} | ${cold[$c]:--} | ${warm[$c]:--} | ${extract[$c]:--} | ${extractname[$c]:--} |"
	[ "${status[$c]}" = ok ] || rc=1
done
echo
[ "$TIME" = 1 ] && echo "times: medians of $RUNS hyperfine runs, each with a sync; cold = empty cache and root"
[ ! -s "$log/fiemap" ] || sed 's/^/FIEMAP: /' "$log/fiemap"
[ ! -s "$log/commands" ] || sed 's/^/ran: /' "$log/commands"
exit $rc
