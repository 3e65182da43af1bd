package install

import (
	"archive/tar"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"pkg/pkgtest/testrepo"
	"strings"
	"sync/atomic"
	"testing"

	"pkg/repo"
)

// stageChain stages n packages of one small tree each, the first depending on the second
// and so on, as an install of an n-deep dependency chain does; each tree is placed in the
// prefix at share/NAME (Into), where it is the package's own.
func stageChain(tb testing.TB, r *Root, base string, n int) []*Staged {
	tb.Helper()
	tarPath := alignedTar(tb, base, []entry{{name: "share/", typ: tar.TypeDir, mode: 0o755}, {name: "share/x", typ: tar.TypeReg, mode: 0o644, data: "x\n"}})
	members, err := scanWithDigests(tarPath)
	if err != nil {
		tb.Fatal(err)
	}
	staged := make([]*Staged, n)
	for i := range staged {
		p := repo.Package{Name: fmt.Sprintf("c%06d", i), Version: "1", SHA256: strings.Repeat("a", 64), Into: fmt.Sprintf("share/c%06d", i)}
		if i+1 < n {
			p.Depends = testrepo.Requires(fmt.Sprintf("c%06d", i+1))
		}
		if staged[i], err = r.Stage(context.Background(), tarPath, p, members); err != nil {
			tb.Fatal(err)
		}
	}
	return staged
}

// BenchmarkApplyChain commits an n-deep dependency chain in one Apply: its cost must grow
// with n, not faster.
func BenchmarkApplyChain(b *testing.B) {
	for _, n := range []int{2000, 4000, 8000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				base := b.TempDir()
				r := openRoot(b, filepath.Join(base, "root"))
				staged := stageChain(b, r, base, n)
				b.StartTimer()
				if _, err := r.Apply(context.Background(), staged, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				r.Close()
				b.StartTimer()
			}
		})
	}
}

// cancelAfter is a context whose Err becomes context.Canceled at its nth call.
type cancelAfter struct {
	context.Context
	n atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestApplyChainCancel cancels the commit of a 1,000-deep chain in the middle of its
// renames: Apply stops there, puts back every tree it moved, and records nothing.
func TestApplyChainCancel(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	staged := stageChain(t, r, base, 1000)
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(500)
	before := lastTx(t, r)
	if _, err := r.Apply(ctx, staged, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply cancelled half way: %v, want context.Canceled", err)
	}
	if n := lastTx(t, r) - before; n > 100 {
		t.Errorf("a cancelled Apply of 1,000 packages took %d write transactions: undoing its intents must take one", n)
	}
	ps, err := r.DB().List()
	ins, err2 := r.DB().Intents()
	if err != nil || err2 != nil || len(ps) != 0 || len(ins) != 0 {
		t.Errorf("after a cancelled Apply: %d packages, %d intents (%v, %v); want none", len(ps), len(ins), err, err2)
	}
	for _, d := range []string{"pkgs", ".pkg/staging", ".pkg/trash"} {
		if ents, err := os.ReadDir(filepath.Join(r.Dir(), d)); err != nil || len(ents) != 0 {
			t.Errorf("%s after a cancelled Apply: %d entries, %v; want none", d, len(ents), err)
		}
	}
}

// lastTx returns the id of the root's last write transaction, as its database's sum file
// (.pkg/db.sum: a magic of 8 bytes, then the id big-endian) records it; 0 before the first.
func lastTx(t *testing.T, r *Root) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir(), ".pkg", "db.sum"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil || len(b) < 16 {
		t.Fatalf("read the sum file: %v (%d bytes)", err, len(b))
	}
	return binary.BigEndian.Uint64(b[8:16])
}
