package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestQuote checks that the shell reads each word back as it was, quoted or escaped.
func TestQuote(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, s := range []string{"/home/u/.local/share/bin", "a b", "it's", `$HOME"\` + "`x`", "*?[~]"} {
		for _, word := range []string{Quote(s), `"` + Escape(s) + `"`} {
			out, err := exec.Command(sh, "-c", "printf %s "+word).Output()
			if err != nil || string(out) != s {
				t.Errorf("sh read %s as %q, %v; want %q", word, out, err, s)
			}
		}
	}
	if got := Quote("/usr/bin"); got != "/usr/bin" {
		t.Errorf("Quote(/usr/bin) = %s, want it bare", got)
	}
}

func TestOnPath(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(".", dir)
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/usr/bin:" + dir, true},
		{link, true},
		{"/usr/bin", false},
		{rel, false},
		{"", false},
	} {
		if got := OnPath(dir, tt.path); got != tt.want {
			t.Errorf("OnPath(%s, %q) = %v, want %v", dir, tt.path, got, tt.want)
		}
	}
}
