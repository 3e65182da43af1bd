// Package fiemap asks a Linux filesystem where a file's data lie (the FIEMAP ioctl), for
// the checks that tell cloned data from written data, for counting shared blocks once, and
// for whether a new database file's first page was ever written.
package fiemap

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Flags, from linux/fiemap.h.
const (
	FlagSync = 0x1 // write dirty pages back first, so the map is that of the data a read sees

	ExtentLast      = 0x1
	ExtentDelalloc  = 0x4   // not allocated yet: the data is only in the page cache
	ExtentUnwritten = 0x800 // allocated, never written: reads as zeros
	ExtentShared    = 0x2000
	// NoPlace marks extents whose physical address does not name their own blocks: unknown
	// or delayed (not allocated yet), encoded, unaligned, inline or tail-packed.
	NoPlace = 0x2 | 0x4 | 0x8 | 0x100 | 0x200 | 0x400
	// Unmatchable adds to NoPlace the extents whose bytes a read does not see there one to
	// one: encrypted, and unwritten (reads as zeros).
	Unmatchable = NoPlace | 0x80 | 0x800
)

const (
	iocFiemap = 0xC020660B // FS_IOC_FIEMAP, from linux/fs.h
	batch     = 64         // extents asked for per ioctl
)

// Extent is one extent of a file's data.
type Extent struct {
	Logical, Physical, Length uint64
	_                         [2]uint64
	Flags                     uint32
	_                         [3]uint32
}

// Map is one FIEMAP request and its answer, reused by one goroutine.
type Map struct {
	start, length                 uint64
	flags, mapped, extentCount, _ uint32
	extents                       [batch]Extent
}

// Each calls fn, in order, for each extent of the open file fd that overlaps [start, end),
// asking with flags (FlagSync or 0), until fn returns false. The error is the ioctl's: a
// filesystem without FIEMAP answers EOPNOTSUPP.
func (m *Map) Each(fd int, start, end uint64, flags uint32, fn func(Extent) bool) error {
	for start < end {
		m.start, m.length, m.flags, m.mapped, m.extentCount = start, end-start, flags, 0, batch
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), iocFiemap, uintptr(unsafe.Pointer(m))); e != 0 {
			return e
		}
		for _, e := range m.extents[:m.mapped] {
			if !fn(e) || e.Flags&ExtentLast != 0 {
				return nil
			}
			start = e.Logical + e.Length
		}
		if m.mapped < batch {
			return nil
		}
	}
	return nil
}
