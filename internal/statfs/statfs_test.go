package statfs

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
)

// TestOf tells XFS and btrfs apart on fresh loop filesystems: btrfs's magic number is the
// one that overflowed the int32 field of 386 and arm.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		kind string
		want Kind
	}{{"xfs", XFS}, {"btrfs", Btrfs}} {
		t.Run(c.kind, func(t *testing.T) {
			d, err := os.Open(testfs.Mount(t, c.kind))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			fs, err := Of(int(d.Fd()))
			if err != nil || fs.Kind != c.want || fs.Block != 4096 {
				t.Errorf("Of(%s) = %+v, %v; want kind %#x, 4096-byte blocks", c.kind, fs, err, uint32(c.want))
			}
		})
	}
	if _, err := Of(-1); !errors.Is(err, unix.EBADF) {
		t.Errorf("Of(-1): err %v, want EBADF", err)
	}
}
