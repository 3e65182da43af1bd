#!/usr/bin/env bash
# pkg against its peers on the same trees, each tool on the same fresh loop filesystem:
#
#   npm tree  bench/peers/package-lock.json, committed: eslint 9, typescript-eslint, typescript,
#             prettier, eslint-plugin-import, eslint-config-prettier and their dependencies,
#             231 packages (229 name@version), about 7,000 files. Installed by bun (its two
#             backends), pnpm (package-import-method=clone), npm ci and pkg sync (the lock
#             imported with `pkg repo add DIR --from package-lock.json --lock OUT`).
#             warm: each tool from its own warm store on the test filesystem, offline (the
#             loopback interface down, its addresses gone: a tool that reaches for the
#             network fails at once);
#             cold: empty store, tarballs over HTTP from a static registry on 127.0.0.1 (pkg:
#             its repository of the same tarballs, served by the same server, and read as a
#             directory).
#   deb set   the 26 .debs `apt-get install --no-install-recommends git curl perl` adds to a
#             Debian 12 base system: pkg install from a warm cache (each published alone,
#             --depends ''), dpkg-deb -x of each, dpkg --root --unpack of all (an empty dpkg
#             database; --force-depends for what the set does not hold, and
#             --force-script-chrootless: git's and perl's preinst only call
#             dpkg-maintscript-helper rm_conffile, which does nothing on a first install).
#   small     what every command pays (hyperfine, RUNS alternating rounds of 20 runs):
#             `pkg --version` against a Go hello world built the same way (go build, this
#             environment); a one-file install (1 MiB + 100 bytes) into an empty root
#             against `cp -a --reflink=always` + `sync -f`;
#             `pkg verify` of Debian's Go toolchain (golang-1.19-go, 489 files) against
#             `pkg verify --full`.
#
# Everything after the downloads runs in a network namespace of its own (unshare -n, loopback
# up): offline is real. Each timed window is the command and a sync -f of the test filesystem;
# rounds alternate the tools (the order turns each round); medians; with each window, what it
# wrote to the loop device and the cache flushes it sent (/sys/block/DEV/stat). Outside the windows, once
# per tool and filesystem: disk used and inodes (the median of the warm rounds' df growth, synced and settled), FIEMAP of the
# installed files (bytes in extents marked shared; files with other hard links), and the
# installed name@version set against the lock's (every package.json right under a
# node_modules/NAME directory), after the first (cold) install and after a warm one.
#
# Run as root from anywhere:   bench/peers.sh
# Environment: FS="xfs btrfs"  RUNS=5  PARTS="npm deb small"  WORK=/var/tmp/pkg-peers
#              PKG=  a built pkg (default: built from this checkout)
#              LOOP_DIO=1: the loop devices write their images with direct I/O, as a disk
#              takes writes when they are issued (bench/loopfs.sh); by default they write
#              into the host's page cache, and the first sync of a window writes it all.
# On a machine others load, `nice -n -10 bench/peers.sh` runs every tool at that priority alike.
# Needs node, npm (the host's; bun and pnpm are installed from the npm registry at the pinned
# versions below into WORK/tools), go, apt-get, dpkg, mkfs.xfs, mkfs.btrfs, unshare, ip,
# python3, and the network for the first run (the npm tarballs, the .debs and the tools are
# kept under WORK/dl and WORK/tools and reused). Prints markdown tables; logs and raw times
# under WORK/results.
set -euo pipefail

FS=${FS:-xfs btrfs}
RUNS=${RUNS:-5}
PARTS=${PARTS:-npm deb small}
WORK=${WORK:-/var/tmp/pkg-peers}
BUN_VERSION=1.4.5
PNPM_VERSION=12.24.0
DEBS="curl git git-man libbrotli1 libcurl3-gnutls libcurl4 liberror-perl libexpat1 libgdbm-compat4
libgdbm6 libgssapi-krb5-2 libk5crypto3 libkeyutils1 libkrb5-3 libkrb5support0 libldap-2.5-0
libnghttp2-14 libperl5.36 libpsl5 librtmp1 libsasl2-2 libsasl2-modules-db libssh2-1 libssl3 perl
perl-modules-5.36"
top=$(cd "$(dirname "$0")/.." && pwd)
here=$top/bench/peers
me=bench/peers.sh
export LC_ALL=C npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

dl=$WORK/dl res=$WORK/results
tools=$WORK/tools/node_modules
BUN=$tools/@oven/bun-linux-x64/bin/bun PNPM=$tools/.bin/pnpm

if [ "${1:-}" != --inside ]; then
	[ "$(id -u)" = 0 ] || { echo "$me: needs root (mount, mkfs, unshare)" >&2; exit 2; }
	for tool in node npm go apt-get dpkg dpkg-deb mkfs.xfs mkfs.btrfs unshare ip python3 hyperfine; do
		command -v "$tool" >/dev/null || { echo "$me: $tool missing" >&2; exit 2; }
	done
	[ "$RUNS" -ge 1 ] || { echo "$me: RUNS must be at least 1" >&2; exit 2; }
	mkdir -p "$WORK/bin" "$dl/deb" "$WORK/home" "$WORK/tools"
	rm -rf "$res" && mkdir -p "$res"
	(cd "$top" && go build -o "$WORK/bin/fetchtool" ./bench/fetchtool)
	# The Go hello world that pkg --version is held to, built as pkg is.
	mkdir -p "$WORK/hello" && printf 'module hello\n\ngo 1.21\n' >"$WORK/hello/go.mod" &&
		printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$WORK/hello/main.go" &&
		(cd "$WORK/hello" && go build -o "$WORK/bin/hello" .)
	if [ -z "${PKG:-}" ]; then
		(cd "$top" && go build -o "$WORK/bin/pkg" ./cmd/pkg)
	else
		cp "$PKG" "$WORK/bin/pkg"
	fi
	{
		# bun and pnpm, pinned, into WORK/tools (the bun package's binary is its platform
		# package's: its postinstall only links it, so scripts are not needed).
		if [ "$("$BUN" --version 2>/dev/null)" != "$BUN_VERSION" ] || [ "$("$PNPM" --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
			(cd "$WORK/tools" && echo '{"private":true}' >package.json &&
				npm install --ignore-scripts --cache "$dl/npmcache" "bun@$BUN_VERSION" "pnpm@$PNPM_VERSION")
		fi
		# The tree's tarballs: npm ci of the committed lock fills an npm cache, out of which
		# each tarball is copied by its integrity.
		if [ "$(ls "$dl/tgz" 2>/dev/null | wc -l)" != "$(python3 -c 'import json,sys; print(len({(k.rsplit("node_modules/",1)[1], v["version"]) for k, v in json.load(open(sys.argv[1]))["packages"].items() if k}))' "$here/package-lock.json")" ]; then
			rm -rf "$WORK/prep" && mkdir -p "$WORK/prep" && cp "$here/package.json" "$WORK/prep/"
			python3 "$here/peers.py" resolved "$here/package-lock.json" "$(npm config get registry)" "$WORK/prep/package-lock.json"
			(cd "$WORK/prep" && npm ci --ignore-scripts --cache "$dl/npmcache")
			python3 "$here/peers.py" tarballs "$here/package-lock.json" "$dl/npmcache/_cacache" "$dl/tgz"
			rm -rf "$WORK/prep"
		fi
		# The .debs.
		for p in $DEBS golang-1.19-go; do
			ls "$dl/deb/${p}_"*.deb >/dev/null 2>&1 || (cd "$dl/deb" && apt-get download "$p")
		done
	} >"$res/download.log" 2>&1 || { tail -20 "$res/download.log" >&2; echo "$me: downloads failed (log: $res/download.log)" >&2; exit 1; }
	exec unshare -n -- "$top/bench/peers.sh" --inside
fi

# In the namespace from here: no network but 127.0.0.1, and that only while online. The
# tools' own caches and settings are WORK's, not the user's.
export HOME=$WORK/home
# offline: no address at all, so that a connection fails at once (with the interface only down,
# it would hang until the tool gives up); online: 127.0.0.1 back, the server's socket with it.
online() { ip link set lo up && { ip addr add 127.0.0.1/8 dev lo 2>/dev/null || true; }; }
offline() { ip link set lo down && ip addr flush dev lo; }
online
. "$top/bench/loopfs.sh"
pkg=$WORK/bin/pkg www=$WORK/www locks=$WORK/locks
srv= d=
cleanup() {
	[ -z "$srv" ] || kill "$srv" 2>/dev/null || true
	for kind in $FS; do
		if mountpoint -q "$WORK/mnt-$kind"; then umount "$WORK/mnt-$kind" || umount -l "$WORK/mnt-$kind"; fi
		rm -f "$WORK/$kind.img"
	done
}
trap cleanup EXIT

# The loopback server of $www (the npm registry and pkg's repository), up for the whole run:
# the locks record its URL.
rm -rf "$www" "$locks" "$WORK/url" && mkdir -p "$www" "$locks"
"$WORK/bin/fetchtool" serve "$www" "$WORK/url" &
srv=$!
while [ ! -s "$WORK/url" ]; do sleep 0.05; done
url=$(cat "$WORK/url")

# fail FS PHASE TOOL WHAT: a tool that failed is left out of the rounds after, and the table
# says why in its place.
fail() {
	echo "$me: $1 $3 ($2): $4" >&2
	[ -s "$res/$1.$2.$3.why" ] || echo "FAIL: $4" >"$res/$1.$2.$3.why"
}
failed() { [ -s "$res/$1.$2.$3.why" ]; }

# timed FS PHASE TOOL ROUND CMD...: CMD and a sync of the test filesystem, in one window;
# appends "FS PHASE TOOL ROUND SECONDS" to times.txt.
timed() {
	local fs=$1 phase=$2 tool=$3 round=$4 t0 t1 w0 w1
	shift 4
	w0=$(devstat)
	t0=$EPOCHREALTIME
	if "$@" >>"$res/$fs.$phase.$tool.log" 2>&1 && sync -f "$d"; then
		t1=$EPOCHREALTIME
		w1=$(devstat)
		echo "$fs $phase $tool $round $(python3 -c "print(f'{$t1 - $t0:.4f}')")" >>"$res/times.txt"
		echo "$fs $phase $tool $round $w0 $w1" >>"$res/writes.txt"
	else
		fail "$fs" "$phase" "$tool" "exit $? ($(tail -c 300 "$res/$fs.$phase.$tool.log" | tr '\n' ' '))"
	fi
}
# devstat: the sectors written to the test filesystem's device and the cache flushes it
# completed so far (/sys/block/DEV/stat), which a window's two readings turn into what the
# window wrote and flushed.
devstat() {
	local dev
	dev=$(basename "$(findmnt -no SOURCE "$d")")
	awk '{ print $7, $16 }' "/sys/block/$dev/stat"
}
# used: the filesystem's used KiB and inodes, synced and settled. XFS frees a removed tree's
# inodes and blocks in the background (inodegc) after rm and sync have returned: a reading
# taken at once counts blocks that are freed during the next install's window, which then
# seems to take less than it does (up to several hundred KiB of 3 MiB, more for a larger
# tree removed before). Read again every 0.3 s until two readings agree (at most 5 s).
used() {
	local a b i
	sync -f "$d" && a=$(df -k --output=used,iused "$d" | tail -1) || return
	for i in $(seq 16); do
		sleep 0.3
		b=$(df -k --output=used,iused "$d" | tail -1)
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo $a
}
# grew BEFORE AFTER: what used() grew by, "KIB INODES".
grew() {
	local b=($1) a=($2)
	echo "$((a[0] - b[0])) $((a[1] - b[1]))"
}

# ---- the npm tree ----
npm_tools="bunc bunh pnpm npm pkg"
cold_tools="bunc bunh pnpm npm pkg pkgdir"
# How pkg's lock is made, in pkgvia: "import", by `pkg repo add DIR --from package-lock.json
# --lock OUT` (#33); where this pkg has no lock import, "resolver": each tarball published
# alone (no flags), package.json's requests locked by `pkg lock`, the set it locks checked
# against npm's (pkglock.set); else none, and pkgwhy says why.
pkgvia= pkgwhy=
pkg_setup() {
	local f reqs
	mkdir -p "$www/pkg"
	# (Not `| grep -q`: under pipefail, pkg's write into a grep that has quit fails the test.)
	if [[ $("$pkg" repo add --help 2>&1) == *--from* ]]; then
		if npm_config_cache=$dl/npmcache "$pkg" repo add "$www/pkg" --from "$locks/npm/package-lock.json" \
			--lock "$locks/pkg.lock" >"$res/lock-pkg.log" 2>&1; then
			pkgvia=import
		else
			pkgwhy="the lock import failed: $(tail -c 300 "$res/lock-pkg.log" | tr '\n' ' ')"
		fi
	else
		for f in "$dl"/tgz/*.tgz; do
			"$pkg" --quiet repo add "$www/pkg" "$f" >>"$res/lock-pkg.log" 2>&1 || {
				pkgwhy="no lock import (\`pkg repo add DIR --from package-lock.json\`, #33), and \`pkg repo add\` of an npm tarball failed: $(tail -c 300 "$res/lock-pkg.log" | tr '\n' ' ')"
				return
			}
		done
		reqs=$(python3 -c 'import json,sys; print(*(f"{n}@{v}" for n, v in json.load(open(sys.argv[1]))["devDependencies"].items()))' "$here/package.json")
		if "$pkg" --quiet --repo "$www/pkg" --root "$WORK/lock-root" --cache "$WORK/lock-cache" lock -o "$locks/pkg.lock" $reqs >>"$res/lock-pkg.log" 2>&1; then
			pkgvia=resolver
		else
			pkgwhy="no lock import (#33), and \`pkg lock\` of the tree failed: $(tail -c 300 "$res/lock-pkg.log" | tr '\n' ' ')"
		fi
		rm -rf "$WORK/lock-root" "$WORK/lock-cache"
	fi
	[ -z "$pkgvia" ] || python3 "$here/peers.py" pkglock "$here/package-lock.json" "$locks/pkg.lock" >"$res/pkglock.set" || true
}

# Locks, made once per run (they record the loopback URL): npm's with each resolved on the
# server; bun's by `bun install --lockfile-only` from it; pnpm's by `pnpm import`; pkg's by
# the lock import, into a repository under $www.
npm_setup() {
	python3 "$here/peers.py" registry "$here/package-lock.json" "$dl/tgz" "$www" "$url"
	for t in npm bun pnpm; do
		mkdir -p "$locks/$t" && cp "$here/package.json" "$locks/$t/" && echo "registry=$url" >"$locks/$t/.npmrc"
	done
	python3 "$here/peers.py" resolved "$here/package-lock.json" "$url-/" "$locks/npm/package-lock.json"
	cp "$locks/npm/package-lock.json" "$locks/bun/"
	cp "$locks/npm/package-lock.json" "$locks/pnpm/"
	(cd "$locks/bun" && "$BUN" install --lockfile-only && rm package-lock.json) >"$res/lock-bun.log" 2>&1 ||
		{ echo "$me: bun's lock: $(tail -3 "$res/lock-bun.log")" >&2; exit 1; }
	(cd "$locks/pnpm" && "$PNPM" import && rm package-lock.json) >"$res/lock-pnpm.log" 2>&1 ||
		{ echo "$me: pnpm's lock: $(tail -3 "$res/lock-pnpm.log")" >&2; exit 1; }
	pkg_setup
}

# npm_install TOOL PHASE: one install of the tree by TOOL into its directory on $d (warm: from
# its store, offline; cold: over HTTP from $url).
npm_install() {
	local t=$1 phase=$2 off=
	[ "$phase" = warm ] && off=1
	case $t in
	bunc | bunh)
		local backend=copyfile
		[ "$t" = bunh ] && backend=hardlink
		(cd "$d/p-$t" && BUN_INSTALL_CACHE_DIR=$d/bun-cache exec "$BUN" install --frozen-lockfile --ignore-scripts \
			--no-progress "--backend=$backend") ;;
	pnpm)
		(cd "$d/p-pnpm" && exec "$PNPM" install --frozen-lockfile --ignore-scripts ${off:+--offline} \
			--store-dir "$d/pnpm-store" --cache-dir "$d/pnpm-cache" --config.package-import-method=clone --reporter=silent) ;;
	npm)
		(cd "$d/p-npm" && exec npm ci --ignore-scripts ${off:+--offline} --cache "$d/npm-cache" --loglevel=error) ;;
	pkg)
		if [ -n "$off" ]; then
			"$pkg" --quiet --root "$d/pkg-root" --cache "$d/pkg-cache" --offline sync -f "$locks/pkg.lock"
		else
			"$pkg" --quiet --root "$d/pkg-root" --cache "$d/pkg-cache" --repo "${url}pkg/" sync -f "$locks/pkg.lock"
		fi ;;
	pkgdir)
		"$pkg" --quiet --root "$d/pkgdir-root" --cache "$d/pkg-cache" sync -f "$locks/pkg.lock" ;;
	esac
}
# target TOOL: what its install makes (removed before each); store TOOL: its store.
target() {
	case $1 in
	pkg | pkgdir) echo "$d/$1-root" ;;
	*) echo "$d/p-$1/node_modules" ;;
	esac
}
store() {
	case $1 in
	bunc | bunh) echo "$d/bun-cache" ;;
	pnpm) echo "$d/pnpm-store $d/pnpm-cache" ;;
	npm) echo "$d/npm-cache" ;;
	pkg | pkgdir) echo "$d/pkg-cache" ;;
	esac
}
# check FS PHASE TOOL: the installed set against the lock's, into FS.PHASE.TOOL.set.
check() {
	local got
	got=$(python3 "$here/peers.py" set "$here/package-lock.json" "$(target "$3")") || true
	echo "$2: $got" >"$res/$1.$2.$3.set"
}

npm_fs() {
	local kind=$1 t r i order
	for t in bunc bunh pnpm npm; do
		mkdir -p "$d/p-$t"
		cp "$locks/${t%[ch]}"/* "$locks/${t%[ch]}"/.npmrc "$d/p-$t/"
	done
	[ -n "$pkgvia" ] || echo "not measured: $pkgwhy" >"$res/$kind.warm.pkg.why"
	# The first install of each fills its store (a cold install, untimed) and is checked.
	for t in $npm_tools; do
		failed "$kind" warm "$t" && continue
		npm_install "$t" cold >"$res/$kind.fill.$t.log" 2>&1 || { fail "$kind" warm "$t" "first install: $(tail -c 300 "$res/$kind.fill.$t.log" | tr '\n' ' ')"; continue; }
		check "$kind" first "$t"
	done
	# Warm, once outside the rounds: disk used, FIEMAP, the set.
	offline
	for t in $npm_tools; do
		failed "$kind" warm "$t" && continue
		rm -rf "$(target "$t")"
		npm_install "$t" warm >"$res/$kind.warm.$t.log" 2>&1 || { fail "$kind" warm "$t" "offline install: $(tail -c 300 "$res/$kind.warm.$t.log" | tr '\n' ' ')"; continue; }
		python3 "$here/peers.py" share "$(target "$t")" >"$res/$kind.warm.$t.share"
		check "$kind" warm "$t"
	done
	# Warm rounds, offline.
	for r in $(seq "$RUNS"); do
		order=$(echo $npm_tools | tr ' ' '\n' | awk -v r="$r" '{ a[NR] = $0 } END { for (i = 0; i < NR; i++) print a[(i + r - 1) % NR + 1] }')
		for t in $order; do
			failed "$kind" warm "$t" && continue
			rm -rf "$(target "$t")" && sync -f "$d"
			local before after
			before=$(used)
			timed "$kind" warm "$t" "$r" npm_install "$t" warm
			after=$(used)
			grew "$before" "$after" >>"$res/$kind.warm.$t.dfs"
		done
	done
	# Disk used: the median of the rounds' df growth (each a warm install, synced and
	# settled, after the tool's last tree was removed, synced and settled), and of inodes.
	for t in $npm_tools; do
		[ -s "$res/$kind.warm.$t.dfs" ] || continue
		python3 "$here/peers.py" disk "$res/$kind.warm.$t.dfs" >"$res/$kind.warm.$t.df"
	done
	# Cold rounds: empty stores, online.
	online
	for r in $(seq "$RUNS"); do
		order=$(echo $cold_tools | tr ' ' '\n' | awk -v r="$r" '{ a[NR] = $0 } END { for (i = 0; i < NR; i++) print a[(i + r - 1) % NR + 1] }')
		for t in $order; do
			failed "$kind" warm "${t%dir}" && continue
			failed "$kind" cold "$t" && continue
			rm -rf "$(target "$t")" $(store "$t") && sync -f "$d"
			timed "$kind" cold "$t" "$r" npm_install "$t" cold
		done
	done
	for t in $cold_tools; do failed "$kind" cold "$t" || failed "$kind" warm "${t%dir}" || check "$kind" last-cold "$t"; done
	rm -rf "$d"/p-* "$d"/pkg-root "$d"/pkgdir-root "$d"/*-cache "$d"/*-store
}

# ---- the Debian set ----
debs=$(for p in $DEBS; do ls "$dl/deb/${p}_"*.deb; done)
deb_tools="pkg dpkgdeb dpkg"
deb_install() {
	case $1 in
	pkg) "$pkg" --quiet --root "$d/deb-root" --cache "$d/deb-cache" --repo "$d/deb-repo" install $DEBS ;;
	dpkgdeb) for f in $debs; do dpkg-deb -x "$f" "$d/x" || return; done ;;
	dpkg) dpkg --root="$d/dr" --force-depends --force-script-chrootless --unpack $debs ;;
	esac
}
deb_target() {
	case $1 in
	pkg) echo "$d/deb-root" ;;
	dpkgdeb) echo "$d/x" ;;
	dpkg) echo "$d/dr" ;;
	esac
}
deb_prepare() {
	rm -rf "$(deb_target "$1")"
	case $1 in
	dpkgdeb) mkdir -p "$d/x" ;;
	dpkg) mkdir -p "$d/dr/var/lib/dpkg/info" "$d/dr/var/lib/dpkg/updates" "$d/dr/var/lib/dpkg/triggers" && : >"$d/dr/var/lib/dpkg/status" ;;
	esac
	sync -f "$d"
}
deb_fs() {
	local kind=$1 t r f order before after
	for f in $debs; do
		"$pkg" --quiet repo add "$d/deb-repo" "$f" --depends '' >>"$res/$kind.deb.add.log" 2>&1 || { fail "$kind" deb pkg "repo add $f"; break; }
	done
	failed "$kind" deb pkg || "$pkg" --quiet --root "$d/deb-root" --cache "$d/deb-cache" --repo "$d/deb-repo" fetch $DEBS >>"$res/$kind.deb.add.log" 2>&1 ||
		fail "$kind" deb pkg "fetch: $(tail -c 300 "$res/$kind.deb.add.log")"
	for t in $deb_tools; do
		failed "$kind" deb "$t" && continue
		deb_prepare "$t"
		before=$(used)
		deb_install "$t" >"$res/$kind.deb.$t.log" 2>&1 || { fail "$kind" deb "$t" "$(tail -c 300 "$res/$kind.deb.$t.log" | tr '\n' ' ')"; continue; }
		after=$(used)
		grew "$before" "$after" | python3 "$here/peers.py" disk - >"$res/$kind.deb.$t.df"
	done
	for r in $(seq "$RUNS"); do
		order=$(echo $deb_tools | tr ' ' '\n' | awk -v r="$r" '{ a[NR] = $0 } END { for (i = 0; i < NR; i++) print a[(i + r - 1) % NR + 1] }')
		for t in $order; do
			failed "$kind" deb "$t" && continue
			deb_prepare "$t"
			timed "$kind" deb "$t" "$r" deb_install "$t"
		done
	done
	rm -rf "$d"/deb-* "$d/x" "$d/dr"
}

# ---- what every command pays ----
# hf NAME LABEL1 PREPARE1 CMD1 LABEL2 PREPARE2 CMD2: RUNS rounds of 20 runs of each
# command (hyperfine, after 10 warm-up runs), the order swapped every round, into
# NAME.ROUND.json (the two labels, pkg's first, in NAME.labels); peers.py pools the runs for
# the medians and takes the ratio of each round's. A PREPARE of "true" prepares nothing.
hf() {
	local name=$1 r a
	shift
	printf '%s\n%s\n' "$1" "$4" >"$res/$name.labels"
	for r in $(seq "$RUNS"); do
		a=(1 4) # the argument offsets of the two commands, in this round's order
		[ $((r % 2)) = 1 ] || a=(4 1)
		local args=() i
		for i in "${a[@]}"; do
			args+=(-n "${@:i:1}" --prepare "${@:i+1:1}" "${@:i+2:1}")
		done
		hyperfine -N --style none --warmup $((r == 1 ? 10 : 3)) --runs 20 --export-json "$res/$name.$r.json" \
			"${args[@]}" >"$res/$name.$r.log" 2>&1 ||
			echo "$me: hyperfine $name round $r failed: $(tail -3 "$res/$name.$r.log")" >&2
	done
}
small_fs() {
	local kind=$1 g
	mkdir -p "$d/one-src/onefile" && head -c $(((1 << 20) + 100)) /dev/urandom >"$d/one-src/onefile/data"
	tar -C "$d/one-src" -cf "$WORK/one.tar" onefile
	g="--quiet --cache $d/small-cache --repo $d/small-repo"
	"$pkg" --quiet repo add "$d/small-repo" "$WORK/one.tar" --name one --version 1 >/dev/null &&
		"$pkg" --quiet repo add "$d/small-repo" "$(ls "$dl/deb/golang-1.19-go_"*.deb)" --depends '' >/dev/null &&
		"$pkg" $g fetch one golang-1.19-go && "$pkg" $g --root "$d/go-root" install golang-1.19-go ||
		{ echo "$me: $kind: small: pkg could not install its packages" >&2; return; }
	hf "$kind.small.onefile" \
		"pkg install (one file)" "rm -rf $d/one-root" "$pkg $g --root $d/one-root install one" \
		"cp -a --reflink=always + sync -f" "rm -rf $d/one-cp" "sh -c 'cp -a --reflink=always $d/one-src $d/one-cp && sync -f $d/one-cp'"
	hf "$kind.small.verify" \
		"pkg verify golang-1.19-go" "true" "$pkg $g --root $d/go-root verify golang-1.19-go" \
		"pkg verify --full golang-1.19-go" "true" "$pkg $g --root $d/go-root verify --full golang-1.19-go"
	rm -rf "$d"/one-* "$d"/go-root "$d"/small-*
}

echo "load at the start: $(uptime)" >"$res/load"
[[ " $PARTS " != *" small "* ]] || hf small.version "pkg --version" "true" "$pkg --version" "Go hello world" "true" "$WORK/bin/hello"
[[ " $PARTS " != *" npm "* ]] || npm_setup
for kind in $FS; do
	d=$WORK/mnt-$kind
	loopfs "$kind" "$WORK/$kind.img" 8G "$d"
	[[ " $PARTS " != *" npm "* ]] || npm_fs "$kind"
	[[ " $PARTS " != *" deb "* ]] || deb_fs "$kind"
	[[ " $PARTS " != *" small "* ]] || small_fs "$kind"
	umount "$d" && rm -f "$WORK/$kind.img"
done
echo "load at the end: $(uptime)" >>"$res/load"

files=$(find "$dl/tgz" -name '*.tgz' | wc -l)
debfiles=$(for f in $debs; do dpkg-deb -c "$f"; done | grep -vc '/$')
python3 - "$res/labels.json" "$debfiles" "$FS" "$PARTS" "$pkgvia" <<'PY'
import json, sys
out, debfiles, fs, parts, pkgvia = sys.argv[1:]
lock = {"import": "the imported lock", "resolver": "pkg's lock (no lock import: see above)"}.get(pkgvia, "the lock")
json.dump({
    "fs": fs.split(),
    "parts": parts.split(),
    "npm": {
        "bunc": "bun, `--backend=copyfile`; cold: the same",
        "bunh": "bun, `--backend=hardlink` (its default)",
        "pnpm": "pnpm, `package-import-method=clone`",
        "pkg": f"pkg sync of {lock}; cold: over HTTP",
        "pkgdir": f"pkg sync of {lock}; cold: the repository as a directory",
        "npm": "npm ci",
    },
    "deb_title": f"Debian set (26 .debs of git, curl and perl, {debfiles} files and links)",
    "deb": {"pkg": "pkg install, warm cache", "dpkgdeb": "`dpkg-deb -x` of each", "dpkg": "`dpkg --root --unpack`"},
}, open(out, "w"))
PY
echo "## bench/peers.sh ($(date -u +%F), RUNS=$RUNS, FS=\"$FS\")"
echo
if [ "$pkgvia" = resolver ]; then
	echo "pkg's lock: this pkg has no lock import (\`pkg repo add DIR --from package-lock.json\`, #33): each tarball published alone with \`pkg repo add\`, package.json's requests locked by \`pkg lock\`; its set against npm's lock: $(cat "$res/pkglock.set")."
	echo
elif [ "$pkgvia" = import ]; then
	echo "pkg's lock: \`pkg repo add DIR --from package-lock.json --lock OUT\`; its set against npm's lock: $(cat "$res/pkglock.set")."
	echo
fi
[[ " $PARTS " != *" npm "* ]] ||
	echo "npm tree: bench/peers/package-lock.json, $files tarballs (name@version); bun $BUN_VERSION, pnpm $PNPM_VERSION, npm $(npm --version), node $(node --version), $("$pkg" --version | head -1)."
echo "Medians of $RUNS alternating rounds, each window the install and a sync -f of the test filesystem, on loop devices $([ "${LOOP_DIO:-0}" = 1 ] && echo "writing with direct I/O (LOOP_DIO=1)" || echo "writing into the host's page cache")$([[ " $PARTS " != *" small "* ]] || echo "; the small part: hyperfine, $RUNS rounds of 20 runs of each command, the order swapping each round, the ratio the median of the rounds'")."
sed 's/^/    /' "$res/load"
python3 "$here/peers.py" table "$res"
