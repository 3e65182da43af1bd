package install

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadOwnerQuotesControl: a holder another user wrote into their root's lock is said
// on one line, quoted, not as the lines it holds.
func TestReadOwnerQuotesControl(t *testing.T) {
	for _, c := range []struct{ wrote, want string }{
		{"pid 7 (pkg install a)\n", "pid 7 (pkg install a)"},
		{"pid 7\npkg: error: fake", `"pid 7\npkg: error: fake"`},
		{"\x1b]0;title\x07", `"\x1b]0;title\a"`},
		{"", "another pkg process"},
	} {
		name := filepath.Join(t.TempDir(), "lock")
		if err := os.WriteFile(name, []byte(c.wrote), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := readOwner(f); got != c.want {
			t.Errorf("readOwner of %q = %s, want %s", c.wrote, got, c.want)
		}
		f.Close()
	}
}
