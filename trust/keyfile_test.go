package trust

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadSigningKeys(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, mode := range []os.FileMode{0o600, 0o644} {
		k, err := GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := WriteKeyFile(p, k); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	keys, exposed, err := ReadSigningKeys(paths)
	if err != nil || len(keys) != 2 {
		t.Fatalf("ReadSigningKeys = %d keys, %v", len(keys), err)
	}
	if len(exposed) != 1 || exposed[0].Path != paths[1] || exposed[0].Mode != 0o644 {
		t.Errorf("exposed = %v, want only %s at 0644", exposed, paths[1])
	}
	if _, _, err := ReadSigningKeys([]string{filepath.Join(dir, "missing")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadSigningKeys of a missing file: %v, want fs.ErrNotExist", err)
	}
	if s := NewSigner("r", time.Now(), nil); s != nil {
		t.Errorf("NewSigner without keys = %+v, want nil", s)
	}
	s, ix := NewSigner("r", time.Now(), keys), index("r", 1, time.Now().Add(time.Hour))
	p := Policy{Keys: []PublicKey{keys[1].Public()}}
	if res, err := p.Verify("file:///r", ix, s.Sign(ix)); err != nil || !res.Verified() {
		t.Errorf("an index NewSigner signed: %+v, %v, want verified", res, err)
	}
}
