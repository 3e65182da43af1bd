package install

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestBinOffPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	r, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bin := filepath.Join(dir, "bin")
	if got := r.BinOffPath("/usr/bin"); got != "" {
		t.Errorf("no commands: %q", got)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "hello"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := r.BinOffPath("/usr/bin"); got != bin {
		t.Errorf("off PATH: %q, want %q", got, bin)
	}
	if got := r.BinOffPath("/usr/bin:" + bin); got != "" {
		t.Errorf("on PATH: %q", got)
	}
}
