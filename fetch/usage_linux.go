package fetch

import (
	"os"

	"pkg/internal/fiemap"
)

// placesOf returns where the data of the open file f lie on its filesystem, in no order,
// and the bytes it occupies at no known place; handled is false where the filesystem does
// not say (tmpfs, some network filesystems). Dirty pages are not written back first: data
// not yet allocated count as the file's alone.
func placesOf(f *os.File) (places []span, alone int64, handled bool) {
	var m fiemap.Map
	err := m.Each(int(f.Fd()), 0, ^uint64(0), 0, func(e fiemap.Extent) bool {
		if e.Flags&fiemap.NoPlace != 0 {
			alone += int64(e.Length)
		} else {
			places = append(places, span{int64(e.Physical), int64(e.Physical + e.Length)})
		}
		return true
	})
	return places, alone, err == nil
}
