#!/bin/sh
# Rebuilds testdata/repo, the demo repository, from the trees described here.
# Run from the repository's top directory: sh testdata/mkrepo.sh
# Archives are made by GNU tar with fixed owners and mtimes, so a rebuild is byte-identical
# for a given tar and compressor version.
set -eu
top=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$top/testdata/repo
rm -rf "$repo"
mkdir -p "$repo"
pack() { # pack DIR OUTPUT COMPRESSOR
	tar -C "$work/$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@1700000000 \
		--format=pax --pax-option=delete=atime,delete=ctime -cf - . | $3 > "$work/$2"
}
pkg() { go run ./cmd/pkg --quiet repo add "$repo" "$@"; }

# libgreet 1.0.0: a library with a data file big enough to be cloned (gzip).
mkdir -p "$work/libgreet/share/libgreet"
printf 'Hello, world!\n' > "$work/libgreet/share/libgreet/greeting"
seq 1 4000 | sed 's/^/greeting line /' > "$work/libgreet/share/libgreet/phrasebook"
pack libgreet libgreet-1.0.0.tar.gz "gzip -9n"
pkg "$work/libgreet-1.0.0.tar.gz" --name libgreet --version 1.0.0 --summary "greetings for hello"

# hello 1.2.0: a command that depends on libgreet (zstd).
mkdir -p "$work/hello/bin" "$work/hello/share/doc/hello"
cat > "$work/hello/bin/hello" <<'SH'
#!/bin/sh
# Prints the greeting that libgreet installs in the same prefix.
here=$(dirname "$(readlink -f "$0")")
cat "$here/../share/libgreet/greeting"
SH
chmod 755 "$work/hello/bin/hello"
printf 'hello prints a greeting.\n' > "$work/hello/share/doc/hello/README"
ln -s README "$work/hello/share/doc/hello/README.txt"
pack hello hello-1.2.0.tar.zst "zstd -19 -q -c"
pkg "$work/hello-1.2.0.tar.zst" --name hello --version 1.2.0 --depends "libgreet>=1.0" \
	--bin bin/hello --summary "says hello"

# fortunes 0.9.1: text with a hardlink and a symlink (xz).
mkdir -p "$work/fortunes/share/fortunes"
seq 1 3000 | sed 's/^/fortune number /' > "$work/fortunes/share/fortunes/all"
ln "$work/fortunes/share/fortunes/all" "$work/fortunes/share/fortunes/everything"
ln -s all "$work/fortunes/share/fortunes/latest"
pack fortunes fortunes-0.9.1.tar.xz "xz -9 -c"
pkg "$work/fortunes-0.9.1.tar.xz" --name fortunes --version 0.9.1 --summary "a few fortunes"
