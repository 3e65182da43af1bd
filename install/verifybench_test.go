package install

import (
	"archive/tar"
	"fmt"
	"path/filepath"
	"testing"

	"pkg/internal/testfs"
	"pkg/tarutil"
)

// membersCache is a Cache of one tar with the members its index had when read: what the
// cache's entry says of them, whatever the tar's bytes became since.
type membersCache struct {
	path    string
	members []tarutil.Member
}

func (c membersCache) Path(string) string { return c.path }

func (c membersCache) Members(string) ([]tarutil.Member, error) { return c.members, nil }

// BenchmarkVerifyShared checks, by their extents, an installed tree on XFS of 300 cloned
// files of 64 KiB to 360 KiB, each with a tail, in 30 directories, from the page cache: the
// shape of a toolchain's tree.
func BenchmarkVerifyShared(b *testing.B) {
	base := testfs.Mount(b, "xfs")
	var entries []entry
	for i := range 300 {
		dir := fmt.Sprintf("d%02d/", i%30)
		if i < 30 {
			entries = append(entries, entry{name: dir, typ: tar.TypeDir, mode: 0o755})
		}
		entries = append(entries, entry{name: fmt.Sprintf("%sf%d", dir, i), typ: tar.TypeReg, mode: 0o644,
			data: randomData(uint64(i), minShared+i*1000+100)})
	}
	tarPath := alignedTar(b, base, entries)
	members, err := scanWithDigests(tarPath)
	if err != nil {
		b.Fatal(err)
	}
	r := openRoot(b, filepath.Join(base, "root"))
	defer r.Close()
	p := pkgOf("tree", "1")
	p.Bin = nil
	if _, err := r.installFrom(tarPath, p); err != nil {
		b.Fatal(err)
	}
	cache := membersCache{tarPath, members}
	b.ReportAllocs()
	for b.Loop() {
		problems, unread, err := r.verify(cache, false, nil)
		if err != nil || len(problems) != 0 || unread == 0 {
			b.Fatal(problems, unread, err)
		}
	}
}
