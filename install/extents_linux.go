package install

import (
	"sort"

	"pkg/internal/fiemap"
)

// extent is a range of a file's data at a known place on its filesystem.
type extent struct{ logical, physical, length int64 }

// span is a range of a file's bytes, [from, to).
type span struct{ from, to int64 }

// sharedExtents appends to out the extents of the open file fd that overlap [start, end)
// and that the filesystem reports shared with another file, at addresses that locate their
// bytes (not encoded, inline or unwritten), in order, dirty pages written back first.
func sharedExtents(m *fiemap.Map, fd int, start, end int64, out []extent) ([]extent, error) {
	err := m.Each(fd, uint64(start), uint64(end), fiemap.FlagSync, func(e fiemap.Extent) bool {
		if e.Flags&(fiemap.Unmatchable|fiemap.ExtentShared) == fiemap.ExtentShared {
			out = append(out, extent{int64(e.Logical), int64(e.Physical), int64(e.Length)})
		}
		return true
	})
	return out, err
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
