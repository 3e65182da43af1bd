package install

import (
	"archive/tar"
	"bytes"
	"cmp"
	"errors"
	"slices"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/fiemap"
	"pkg/tarutil"
)

// cachedTar is the cache's tar a package was installed from, open for comparing extents.
type cachedTar struct {
	fd      int
	dev     uint64
	members map[string]*tarutil.Member // regular members checked by extents, and hardlinks to them, by path
	ext     []extent                   // the shared extents of the checked members' data, in order
}

// openCachedTar opens the tar of the archive with this sha256 in cache, or returns nil when
// the entry is gone or damaged.
func openCachedTar(cache Cache, sha string) *cachedTar {
	members, err := cache.Members(sha)
	if err != nil {
		return nil
	}
	fd, err := unix.Open(cache.Path(sha), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil
	}
	s := &cachedTar{fd: fd, dev: st.Dev, members: map[string]*tarutil.Member{}}
	for i := range members {
		if m := &members[i]; m.Type == tar.TypeReg && m.Size >= minShared {
			s.members[m.Name] = m
		}
	}
	for _, m := range members {
		if t := s.members[m.Linkname]; m.Type == tar.TypeLink && t != nil {
			s.members[m.Name] = t
		}
	}
	if s.ext, err = checkedExtents(fd, members); err != nil {
		s.members = nil // every file hashed
	}
	return s
}

// checkedExtents returns the shared extents of the data of the members of the tar open at
// fd that are checked by extents, in order: one call of the filesystem for each run of
// them in the tar rather than one for each (docs/history.md).
func checkedExtents(fd int, members []tarutil.Member) ([]extent, error) {
	var ext []extent
	var err error
	fm := new(fiemap.Map)
	var from, to int64 // the run of checked members' whole blocks being gathered
	flush := func() {
		if err == nil && to > from {
			ext, err = sharedExtents(fm, fd, from, to, ext)
		}
		from, to = 0, 0
	}
	for i := range members {
		switch m := &members[i]; {
		case m.Type != tar.TypeReg || m.Size == 0:
			// no data: the run goes on past it
		case m.Size < minShared:
			flush()
		default:
			if to == from {
				from = m.Offset
			}
			to = m.Offset + m.Size&^(tarutil.Alignment-1)
		}
	}
	flush()
	if err == nil && !slices.IsSortedFunc(ext, func(a, b extent) int { return cmp.Compare(a.logical, b.logical) }) {
		err = errors.New("members out of order") // an index not of the tar: hash instead
	}
	return ext, err
}

// pendingTar is a cachedTar being opened, on a goroutine of its own, so that reading the
// cache's index overlaps checking the files that need no tar.
type pendingTar struct {
	done chan struct{}
	tar  *cachedTar
}

// startCachedTar opens the tar as openCachedTar does, on a goroutine of its own.
func startCachedTar(cache Cache, sha string) *pendingTar {
	p := &pendingTar{done: make(chan struct{})}
	go func() {
		p.tar = openCachedTar(cache, sha)
		close(p.done)
	}()
	return p
}

// ready reports whether the tar is open (or found missing): whether get would not wait.
func (p *pendingTar) ready() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// get waits for the tar and returns it, or nil when its entry is gone or damaged.
func (p *pendingTar) get() *cachedTar {
	<-p.done
	return p.tar
}

func (s *cachedTar) close() {
	if s != nil {
		unix.Close(s.fd)
	}
}

// sameAsCached reports whether the file open at fd holds the data src's member of f's path
// holds, that member's digest being f's: its bytes that lie on the tar's own blocks at the
// same place in the member need no reading, and the others (at most an eighth of the file:
// read from two places, cold, more would cost as much as hashing it) must equal the tar's.
// False means only that hashing must decide: a tar damaged where it shares nothing cannot
// make an intact file fail.
func (c *fileChecker) sameAsCached(src *cachedTar, fd int, f *db.File) bool {
	if src == nil {
		return false
	}
	m := src.members[f.Path]
	var st unix.Stat_t // on the tar's filesystem: physical addresses are its own
	if m == nil || m.SHA256 != f.SHA256 || unix.Fstat(fd, &st) != nil ||
		st.Dev != src.dev || st.Size != m.Size {
		return false
	}
	// Only whole blocks can be shared: asking for the last, partial one too would cost the
	// filesystem a lookup of its sharing (XFS) for bytes compared anyway.
	whole := m.Size &^ (tarutil.Alignment - 1)
	var err error
	if c.ext, err = sharedExtents(c.fm, fd, 0, whole, c.ext[:0]); err != nil || len(c.ext) == 0 {
		return false
	}
	gaps := unshared(c.ext, src.ext, m.Offset, m.Size)
	var n int64
	for _, g := range gaps {
		n += g.to - g.from
	}
	if 8*n > m.Size {
		return false
	}
	for _, g := range gaps {
		if !c.sameBytes(fd, src.fd, g, m.Offset) {
			return false
		}
	}
	c.unread.Add(m.Size - n)
	return true
}

// minShared is the smallest file checked by its extents; smaller ones are hashed. Reading
// one from the disk costs about what reading its tail from it and from the tar does
// (bench/verify.sh, kernel shape, cold; docs/history.md).
const minShared = 64 << 10 // 64 KiB

// sameBytes reports whether the bytes of g in the file fd equal those at off+g in the tar.
func (c *fileChecker) sameBytes(fd, tarFd int, g span, off int64) bool {
	half := len(c.buf) / 2
	a, b := c.buf[:half], c.buf[half:]
	for at := g.from; at < g.to; {
		n := int(min(int64(half), g.to-at))
		if !readFull(fd, a[:n], at) || !readFull(tarFd, b[:n], off+at) || !bytes.Equal(a[:n], b[:n]) {
			return false
		}
		at += int64(n)
	}
	return true
}

// readFull reads len(p) bytes at off from fd, reporting whether it could.
func readFull(fd int, p []byte, off int64) bool {
	for len(p) > 0 {
		n, err := unix.Pread(fd, p, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return false
		}
		p, off = p[n:], off+int64(n)
	}
	return true
}
