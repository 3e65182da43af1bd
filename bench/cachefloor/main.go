// Command cachefloor does the least a warm install from a pkg cache must, for a script to
// time (bench/peers/ab/floor.sh): it clones every entry of CACHE into DEST/N (N the
// entry's place in the cache's list) with GOMAXPROCS workers, and does nothing else: no
// staging, no records, no layout, no modification times, no sync (the timed window syncs),
// and only directories and regular files. Each file is cloned as pkg clones it: its whole
// blocks from the entry's tar, the rest from the entry's tail file where it keeps one;
// else, as on btrfs, a file under a block is sent and a larger one cloned to the end of its
// last block and cut to size.
//
// With -store DIR each file is cloned whole from DIR/N/NAME instead: the layout bun and
// pnpm keep their stores in, which -prepare-store DIR writes from the cache, untimed.
//
//	cachefloor [-store DIR] CACHE DEST
//	cachefloor -prepare-store DIR CACHE
package main

import (
	"archive/tar"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"pkg/fetch"
	"pkg/tarutil"
)

func main() {
	store := flag.String("store", "", "clone each file whole from `DIR`/N/NAME")
	prepare := flag.String("prepare-store", "", "write each entry's files to `DIR`/N and stop")
	flag.Parse()
	if *prepare == "" && flag.NArg() != 2 || *prepare != "" && (flag.NArg() != 1 || *store != "") {
		fmt.Fprintln(os.Stderr, "usage: cachefloor [-store DIR] CACHE DEST | cachefloor -prepare-store DIR CACHE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *store, *prepare); err != nil {
		fmt.Fprintf(os.Stderr, "cachefloor: %v\n", err)
		os.Exit(1)
	}
}

func run(cacheDir, dest, store, prepare string) error {
	c, err := fetch.OpenCache(context.Background(), cacheDir)
	if err != nil {
		return err
	}
	defer c.Close()
	es, err := c.List()
	if err != nil {
		return err
	}
	each := func(i int, sha string) error { return cloneEntry(c, sha, fmt.Sprintf("%s/%d", dest, i), store, i) }
	if prepare != "" {
		dest = prepare
		each = func(i int, sha string) error { return writeEntry(c, sha, fmt.Sprintf("%s/%d", prepare, i)) }
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	jobs := make(chan int)
	errs := make(chan error, len(es))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := each(i, es[i].SHA256); err != nil {
					errs <- fmt.Errorf("entry %s: %w", es[i].SHA256, err)
				}
			}
		}()
	}
	for i := range es {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	err = <-errs
	if n := len(errs); n > 0 {
		return fmt.Errorf("%w (and %d more entries)", err, n)
	}
	return err
}

// tree makes the directories of an entry's tree and keeps them open for the files'
// creates, by name ("." its top).
type tree struct {
	dirs map[string]int
}

func newTree(dest string) (*tree, error) {
	if err := unix.Mkdir(dest, 0o755); err != nil {
		return nil, &os.PathError{Op: "mkdir", Path: dest, Err: err}
	}
	fd, err := unix.Open(dest, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dest, Err: err}
	}
	return &tree{dirs: map[string]int{".": fd}}, nil
}

// dir returns a descriptor of the directory name, made with its parents where missing.
func (t *tree) dir(name string) (int, error) {
	if fd, ok := t.dirs[name]; ok {
		return fd, nil
	}
	parent, err := t.dir(path.Dir(name))
	if err != nil {
		return -1, err
	}
	if err := unix.Mkdirat(parent, path.Base(name), 0o755); err != nil && err != unix.EEXIST {
		return -1, &os.PathError{Op: "mkdir", Path: name, Err: err}
	}
	fd, err := unix.Openat(parent, path.Base(name), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: name, Err: err}
	}
	t.dirs[name] = fd
	return fd, nil
}

// create makes the regular file name, empty, for writing.
func (t *tree) create(name string, mode os.FileMode) (int, error) {
	d, err := t.dir(path.Dir(name))
	if err != nil {
		return -1, err
	}
	fd, err := unix.Openat(d, path.Base(name), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return -1, &os.PathError{Op: "create", Path: name, Err: err}
	}
	return fd, nil
}

func (t *tree) close() {
	for _, fd := range t.dirs {
		unix.Close(fd)
	}
}

// cloneEntry clones the entry sha's files into dest: from its tar and tail files, or with
// store set, whole from store/i.
func cloneEntry(c *fetch.Cache, sha, dest, store string, i int) error {
	// files: the entry's tail files, -1 where it keeps none, or its directory in the store
	dir := strings.TrimSuffix(c.Path(sha), ".tar") + ".tails"
	if store != "" {
		dir = fmt.Sprintf("%s/%d", store, i)
	}
	files, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	switch {
	case err == unix.ENOENT && store == "":
		files = -1
	case err != nil:
		return &os.PathError{Op: "open", Path: dir, Err: err}
	default:
		defer unix.Close(files)
	}
	return makeEntry(c, sha, dest, func(t *tree, src int, size int64, m *tarutil.Member) error {
		if store != "" {
			return cloneWhole(t, files, m)
		}
		return cloneMember(t, src, size, files, m)
	})
}

// makeEntry makes the entry sha's directories beneath dest, and each of its regular files
// with file, given the entry's tar and its size; it skips links.
func makeEntry(c *fetch.Cache, sha, dest string, file func(t *tree, src int, size int64, m *tarutil.Member) error) error {
	ms, err := c.Members(sha)
	if err != nil {
		return err
	}
	src, err := os.Open(c.Path(sha))
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	t, err := newTree(dest)
	if err != nil {
		return err
	}
	defer t.close()
	for _, m := range ms {
		switch m.Type {
		case tar.TypeDir:
			_, err = t.dir(m.Name)
		case tar.TypeReg:
			err = file(t, int(src.Fd()), info.Size(), &m)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// cloneWhole clones m whole from its file beneath the store's directory of the entry.
func cloneWhole(t *tree, store int, m *tarutil.Member) error {
	s, err := unix.Openat(store, m.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: m.Name, Err: err}
	}
	defer unix.Close(s)
	fd, err := t.create(m.Name, m.Mode)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.IoctlFileClone(fd, s); err != nil {
		return &os.PathError{Op: "clone", Path: m.Name, Err: err}
	}
	return nil
}

// cloneMember clones m's whole blocks from the tar src, size bytes long, and its tail from
// its tail file in tails (-1: none). Without one, as pkg on btrfs, a file under a block
// (its data unaligned in the tar) is sent, a larger one cloned to the end of its last
// block in one range and cut to size (install's cloneTruncate).
func cloneMember(t *tree, src int, size int64, tails int, m *tarutil.Member) error {
	fd, err := t.create(m.Name, m.Mode)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	off, n := m.Tail()
	body := m.Size - n
	tf := -1
	if n > 0 && tails >= 0 {
		tf, err = unix.Openat(tails, strconv.FormatInt(off, 10), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		switch {
		case err == nil:
			defer unix.Close(tf)
		case err != unix.ENOENT:
			return &os.PathError{Op: "open tail", Path: m.Name, Err: err}
		default:
			tf = -1
		}
	}
	switch {
	case n == 0 || tf >= 0:
		err = cloneRange(fd, src, m.Offset, 0, body)
		if err == nil && n > 0 {
			err = cloneRange(fd, tf, 0, body, n)
		}
	case body == 0:
		err = send(fd, src, off, n)
	default:
		// A clone may end off a block only at the source's end of file.
		err = cloneRange(fd, src, m.Offset, 0, min(body+tarutil.Alignment, size-m.Offset))
		if err == nil {
			err = unix.Ftruncate(fd, m.Size)
		}
	}
	if err != nil {
		return &os.PathError{Op: "clone", Path: m.Name, Err: err}
	}
	return nil
}

// send copies n bytes of src at off into the new, empty file fd.
func send(fd, src int, off, n int64) error {
	for n > 0 {
		c, err := unix.Sendfile(fd, src, &off, int(n))
		if err != nil {
			return err
		}
		if c == 0 {
			return io.ErrUnexpectedEOF
		}
		n -= int64(c)
	}
	return nil
}

func cloneRange(dst, src int, srcOff, dstOff, n int64) error {
	if n == 0 {
		return nil
	}
	return unix.IoctlFileCloneRange(dst, &unix.FileCloneRange{Src_fd: int64(src), Src_offset: uint64(srcOff), Src_length: uint64(n), Dest_offset: uint64(dstOff)})
}

// writeEntry writes the entry sha's files into dest, each a file of its own.
func writeEntry(c *fetch.Cache, sha, dest string) error {
	return makeEntry(c, sha, dest, func(t *tree, src int, _ int64, m *tarutil.Member) error { return writeMember(t, src, m) })
}

func writeMember(t *tree, src int, m *tarutil.Member) error {
	fd, err := t.create(m.Name, m.Mode)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := send(fd, src, m.Offset, m.Size); err != nil {
		return &os.PathError{Op: "write", Path: m.Name, Err: err}
	}
	return nil
}
