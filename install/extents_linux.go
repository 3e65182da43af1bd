package install

import (
	"sort"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FIEMAP, from linux/fiemap.h and linux/fs.h.
const (
	fsIocFiemap      = 0xC020660B
	fiemapFlagSync   = 0x1 // write dirty pages back first, so the map is that of the data a read sees
	fiemapExtentLast = 0x1
	// Extents whose physical address does not locate their bytes one to one: unknown or
	// delayed (not allocated yet), encoded (compressed), encrypted, unaligned, inline or
	// tail-packed, unwritten (reads as zeros).
	fiemapUnmatchable  = 0x2 | 0x4 | 0x8 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
	fiemapExtentShared = 0x2000
	fiemapBatch        = 64 // extents asked for per ioctl
)

type fiemapExtent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

type fiemapHeader struct {
	Start, Length                 uint64
	Flags, Mapped, ExtentCount, _ uint32
}

// fiemapBuf is one FIEMAP request and its answer, reused by one goroutine.
type fiemapBuf struct {
	fiemapHeader
	extents [fiemapBatch]fiemapExtent
}

// extent is a range of a file's data at a known place on its filesystem.
type extent struct{ logical, physical, length int64 }

// span is a range of a file's bytes, [from, to).
type span struct{ from, to int64 }

// sharedExtents appends to out the extents of the open file fd that overlap [start, end)
// and that the filesystem reports shared with another file, at addresses that locate their
// bytes (not encoded, inline or unwritten), in order.
func (b *fiemapBuf) sharedExtents(fd int, start, end int64, out []extent) ([]extent, error) {
	for start < end {
		b.fiemapHeader = fiemapHeader{Start: uint64(start), Length: uint64(end - start), Flags: fiemapFlagSync, ExtentCount: fiemapBatch}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(b))); e != 0 {
			return out, e
		}
		if b.Mapped == 0 {
			break
		}
		for _, e := range b.extents[:b.Mapped] {
			if e.Flags&(fiemapUnmatchable|fiemapExtentShared) == fiemapExtentShared {
				out = append(out, extent{int64(e.Logical), int64(e.Physical), int64(e.Length)})
			}
			start = int64(e.Logical + e.Length)
			if e.Flags&fiemapExtentLast != 0 {
				return out, nil
			}
		}
		if b.Mapped < fiemapBatch {
			break
		}
	}
	return out, nil
}

// unshared returns the ranges of the first size bytes of a file, whose extents are file,
// that do not lie on the very blocks that hold the same range of a member's data at offset
// off in a tar whose extents are tar: where the file's byte at L is not at the physical
// address of the tar's byte at off+L. Both lists are in order and do not overlap.
func unshared(file, tar []extent, off, size int64) []span {
	var gaps []span
	done := int64(0) // the file's bytes before done are matched or in gaps
	for _, e := range file {
		a, b := max(e.logical, done), min(e.logical+e.length, size)
		i := sort.Search(len(tar), func(i int) bool { return tar[i].logical+tar[i].length > off+a })
		for ; a < b && i < len(tar) && tar[i].logical < off+b; i++ {
			t := tar[i]
			x, y := max(t.logical-off, a), min(t.logical+t.length-off, b)
			if t.physical+(off+x-t.logical) != e.physical+(x-e.logical) {
				continue
			}
			if x > done {
				gaps = append(gaps, span{done, x})
			}
			done = y
		}
	}
	if done < size {
		gaps = append(gaps, span{done, size})
	}
	return gaps
}
