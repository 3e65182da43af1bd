// Command floor measures the irreducible cost of installing an aligned tar: it creates every
// directory and file of the tar under a destination, writes only the bytes that no clone can
// cover, and syncs the filesystem once. With -empty it writes no bytes at all.
//
//	go run ./bench/floor -tails tar.aligned DEST
//
// -tails also writes the last partial block of files of a block or more (on XFS pkg writes
// it; on btrfs pkg clones it, so leave -tails off there). Files under one block are always
// written.
//
// Two modes model designs rather than floors: -clone also clones each file's whole blocks
// from the tar (what pkg does, without pkg); -tailfiles DIR clones the body from the tar and
// the partial last block from a file of its own in DIR whose end is the tail's end, as a
// clone of a whole file can (files under one block stay written). -prepare DIR writes those
// tail files, untimed, as a fetch would.
package main

import (
	"archive/tar"
	"flag"
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/tarutil"
)

func main() {
	empty := flag.Bool("empty", false, "create the files empty")
	tails := flag.Bool("tails", false, "also write the partial last block of big files")
	clone := flag.Bool("clone", false, "clone the whole blocks of files from the tar")
	tailDir := flag.String("tailfiles", "", "clone the partial last blocks of big files from the files in `DIR`")
	prepare := flag.String("prepare", "", "write the tail files into `DIR` and stop")
	flag.Parse()
	if flag.NArg() != 2 && !(*prepare != "" && flag.NArg() == 1) {
		fmt.Fprintln(os.Stderr, "usage: floor [-empty] [-tails] [-clone] [-tailfiles DIR] ALIGNED_TAR DEST | floor -prepare DIR ALIGNED_TAR")
		os.Exit(2)
	}
	var err error
	if *prepare != "" {
		err = prepareTails(flag.Arg(0), *prepare)
	} else {
		err = run(flag.Arg(0), flag.Arg(1), mode{empty: *empty, tails: *tails, clone: *clone || *tailDir != "", tailDir: *tailDir})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "floor: %v\n", err)
		os.Exit(1)
	}
}

type mode struct {
	empty, tails, clone bool
	tailDir             string
	src, tailFD         int // the tar's descriptor, the tail directory's
}

// prepareTails writes, for each member of a block or more with a partial last block, that
// block's bytes to DIR/N, N the member's place in the tar, and syncs them.
func prepareTails(tarPath, dir string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	members, err := tarutil.Scan(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, m := range members {
		body := m.Size &^ (tarutil.Alignment - 1)
		if m.Type != tar.TypeReg || m.Size < tarutil.Alignment || body == m.Size {
			continue
		}
		b := make([]byte, m.Size-body)
		if _, err := f.ReadAt(b, m.Offset+body); err != nil {
			return err
		}
		if err := os.WriteFile(fmt.Sprintf("%s/%d", dir, i), b, 0o644); err != nil {
			return err
		}
	}
	return durable.FS(dir)
}

func run(tarPath, dest string, md mode) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close() // and keeps f, whose descriptor the clones use, from being finalized
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
	md.src = int(f.Fd())
	if md.tailDir != "" {
		if md.tailFD, err = unix.Open(md.tailDir, unix.O_PATH|unix.O_DIRECTORY, 0); err != nil {
			return err
		}
	}
	dirs := map[string]int{".": root}
	for i, m := range members {
		switch m.Type {
		case tar.TypeDir:
			if err := unix.Mkdirat(root, m.Name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := file(root, dirs, i, m, data, md); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
		}
	}
	return unix.Syncfs(root)
}

func file(root int, dirs map[string]int, i int, m tarutil.Member, data []byte, md mode) error {
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
	body := m.Size &^ (tarutil.Alignment - 1)
	switch {
	case md.empty:
	case m.Size < tarutil.Alignment:
		from = 0
	case md.clone: // also with tailDir
		if err := cloneRange(fd, md.src, m.Offset, 0, body); err != nil {
			return err
		}
		if md.tailDir != "" && body < m.Size {
			tfd, err := unix.Openat(md.tailFD, fmt.Sprint(i), unix.O_RDONLY, 0)
			if err != nil {
				return err
			}
			defer unix.Close(tfd)
			return cloneRange(fd, tfd, 0, body, m.Size-body)
		}
		from = body
	case md.tails:
		from = body
	}
	if from < m.Size {
		_, err = unix.Pwrite(fd, data[m.Offset+from:m.Offset+m.Size], from)
	}
	return err
}

func cloneRange(dst, src int, srcOff, dstOff, n int64) error {
	if n == 0 {
		return nil
	}
	return unix.IoctlFileCloneRange(dst, &unix.FileCloneRange{Src_fd: int64(src), Src_offset: uint64(srcOff), Src_length: uint64(n), Dest_offset: uint64(dstOff)})
}
