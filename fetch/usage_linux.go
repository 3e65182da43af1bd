package fetch

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FIEMAP, from linux/fiemap.h and linux/fs.h.
const (
	fsIocFiemap      = 0xC020660B
	fiemapExtentLast = 0x1
	// Extents whose physical address does not name their own blocks: unknown or delayed
	// (not allocated yet), encoded, unaligned, inline or tail-packed. Their bytes count as
	// the file's alone.
	fiemapNoPlace = 0x2 | 0x4 | 0x8 | 0x100 | 0x200 | 0x400
	fiemapBatch   = 256 // extents asked for per ioctl
)

type fiemapExtent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

type fiemapRequest struct {
	Start, Length                 uint64
	Flags, Mapped, ExtentCount, _ uint32
	Extents                       [fiemapBatch]fiemapExtent
}

// placesOf returns where the data of the open file f lie on its filesystem, in no order,
// and the bytes it occupies at no known place; handled is false where the filesystem does
// not say (tmpfs, some network filesystems). Dirty pages are not written back first: data
// not yet allocated count as the file's alone.
func placesOf(f *os.File) (places []span, alone int64, handled bool) {
	var req fiemapRequest
	for start := uint64(0); ; {
		req = fiemapRequest{Start: start, Length: ^uint64(0) - start, ExtentCount: fiemapBatch}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&req))); e != 0 {
			return nil, 0, false
		}
		for _, e := range req.Extents[:req.Mapped] {
			if e.Flags&fiemapNoPlace != 0 {
				alone += int64(e.Length)
			} else {
				places = append(places, span{int64(e.Physical), int64(e.Physical + e.Length)})
			}
			start = e.Logical + e.Length
			if e.Flags&fiemapExtentLast != 0 {
				return places, alone, true
			}
		}
		if req.Mapped < fiemapBatch {
			return places, alone, true
		}
	}
}
