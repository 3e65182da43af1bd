// Command floor measures the irreducible cost of installing an aligned tar: it creates every
// directory and file of the tar under a destination, writes only the bytes that no clone can
// cover, and syncs the filesystem once. With -empty it writes no bytes at all.
//
//	go run ./bench/floor -tails tar.aligned DEST
//
// -tails also writes the last partial block of files of a block or more (on XFS pkg writes
// it; on btrfs pkg clones it, so leave -tails off there). Files under one block are always
// written.
package main

import (
	"archive/tar"
	"flag"
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"pkg/tarutil"
)

func main() {
	empty := flag.Bool("empty", false, "create the files empty")
	tails := flag.Bool("tails", false, "also write the partial last block of big files")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor [-empty] [-tails] ALIGNED_TAR DEST")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *empty, *tails); err != nil {
		fmt.Fprintf(os.Stderr, "floor: %v\n", err)
		os.Exit(1)
	}
}

func run(tarPath, dest string, empty, tails bool) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	members, err := tarutil.Scan(f)
	if err != nil {
		return err
	}
	info, _ := f.Stat()
	data, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	root, err := unix.Open(dest, unix.O_RDONLY|unix.O_DIRECTORY, 0) // not O_PATH: syncfs needs a real descriptor
	if err != nil {
		return err
	}
	dirs := map[string]int{".": root}
	for _, m := range members {
		switch m.Type {
		case tar.TypeDir:
			if err := unix.Mkdirat(root, m.Name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := file(root, dirs, m, data, empty, tails); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
		}
	}
	return unix.Syncfs(root)
}

func file(root int, dirs map[string]int, m tarutil.Member, data []byte, empty, tails bool) error {
	dir := path.Dir(m.Name)
	dfd, ok := dirs[dir]
	if !ok {
		var err error
		if dfd, err = unix.Openat(root, dir, unix.O_PATH|unix.O_DIRECTORY, 0); err != nil {
			return err
		}
		dirs[dir] = dfd
	}
	fd, err := unix.Openat(dfd, path.Base(m.Name), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, uint32(m.Mode))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var from int64 = m.Size // write nothing
	switch {
	case empty:
	case m.Size < tarutil.Alignment:
		from = 0
	case tails:
		from = m.Size &^ (tarutil.Alignment - 1)
	}
	if from < m.Size {
		_, err = unix.Pwrite(fd, data[m.Offset+from:m.Offset+m.Size], from)
	}
	return err
}
