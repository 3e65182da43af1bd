#!/bin/sh
# run.sh CHECKOUT OUTFILE [LAYERS_FILE] [ENTRIES]
# Builds CHECKOUT's cmd/pkg with coverage of every module package, publishes one small
# package (a command and a data file, tar.gz, no dependencies, unsigned) into a directory
# repository with that binary's `pkg repo add`, installs it with one
# `pkg --root R --cache C install tool --repo DIR` (root and cache on one loop-mounted XFS, so
# the install clones as in use), keeps that one process's coverage, and runs measure on it.
# LAYERS_FILE: layers list for a checkout whose docs/design.md lacks one ('' = design.md).
# ENTRIES: comma-separated PKGPATH.FUNC where the change's flow starts (default pkg/cmd/pkg.apply).
set -eu
src=$(cd "$1" && pwd)
out=$2
layers=${3:-}
entries=${4:-pkg/cmd/pkg.apply}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/measure.XXXXXX)
mnt=$w/xfs
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$w"; }
trap cleanup EXIT

(cd "$src" && nice -n 10 go build -cover -covermode=count -coverpkg=./... -o "$w/pkg" ./cmd/pkg)
(cd "$here" && nice -n 10 go build -o "$w/measure" .)

truncate -s 300M "$w/xfs.img"
mkfs.xfs -q "$w/xfs.img"
mkdir -p "$mnt"
mount -o loop "$w/xfs.img" "$mnt"

export HOME=$w/home XDG_CONFIG_HOME=$w/home/.config XDG_CACHE_HOME=$w/home/.cache XDG_DATA_HOME=$w/home/.local/share
unset PKG_REPO PKG_ROOT PKG_CACHE PKG_TRUSTED_KEYS PKG_REQUIRE_SIGNED PKG_OFFLINE || true
mkdir -p "$HOME" "$w/tree/bin" "$w/tree/share/tool" "$w/repo" "$w/cov-publish" "$w/cov-install"
printf '#!/bin/sh\necho tool 1.0\n' > "$w/tree/bin/tool"
chmod 755 "$w/tree/bin/tool"
seq 1 2000 | sed 's/^/line /' > "$w/tree/share/tool/data"
tar -C "$w/tree" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1700000000 -czf "$w/tool-1.0.tar.gz" .
GOCOVERDIR=$w/cov-publish "$w/pkg" --quiet repo add "$w/repo" "$w/tool-1.0.tar.gz" --name tool --version 1.0 --bin bin/tool --summary "one command"
GOCOVERDIR=$w/cov-install "$w/pkg" --root "$mnt/root" --cache "$mnt/cache" install tool --repo "$w/repo" > "$w/install.out" 2>&1
test -x "$mnt/root/bin/tool"
go tool covdata textfmt -i="$w/cov-install" -o "$w/install.cov"
cp "$w/install.cov" "${out%.txt}.cov"

{
	echo "commit: $(git -C "$src" rev-parse --short HEAD) ($(git -C "$src" log -1 --format=%cI))"
	echo "measured: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "install's output:"
	sed 's/^/  | /' "$w/install.out"
	echo
	nice -n 10 "$w/measure" -dir "$src" ${layers:+-layers "$layers"} -cover "$w/install.cov" -entry "$entries"
} > "$out"
