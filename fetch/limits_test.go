package fetch

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/repo"
	"pkg/tarutil"
)

// TestNameBytesRefused fetches an archive whose member names pass the 64 MiB tarutil allows
// in all (a 4,095-byte name each: 16,400 of them) and checks that the fetch fails naming
// the member past the limit, and leaves the cache as it was.
func TestNameBytesRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("converts 75 MB of headers")
	}
	dir := strings.Repeat(strings.Repeat("d", 255)+"/", 15)
	name := func(i int) string { return fmt.Sprintf("%s%0254d", dir, i) } // 4,094 bytes
	var archive strings.Builder
	zw := gzip.NewWriter(&archive)
	tw := tar.NewWriter(zw)
	for i := range 16400 {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name(i), Mode: 0o644, Format: tar.FormatPAX}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(archive.String()))
	p := repo.Package{Name: "names", Version: "1", Archive: "names.tar.gz", Size: int64(archive.Len()), SHA256: hex.EncodeToString(sum[:])}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, p.Archive), []byte(archive.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	err := fetchOne(c, quick(t, src), p)
	var me *tarutil.MemberError
	if !errors.As(err, &me) || !errors.Is(err, tarutil.ErrLimit) || !strings.HasPrefix(me.Name, dir) {
		t.Fatalf("fetch: %v, want a member refused for the limit on names", err)
	}
	if le := (*tarutil.LimitError)(nil); !errors.As(err, &le) || le.Limit != "name bytes" || len(err.Error()) > 500 {
		t.Errorf("error %.600q: want the limit named, and the member's name cut", err)
	}
	checkEmpty(t, c)
}
