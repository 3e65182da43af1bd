package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrustedFile adds and removes keys in a trusted-keys file that has comments and a
// line of two keys: the other lines stay as they were.
func TestTrustedFile(t *testing.T) {
	a, b, c := newKey(t).Public(), newKey(t).Public(), newKey(t).Public()
	path := filepath.Join(t.TempDir(), "trusted-keys")
	if keys, err := ReadTrusted(path); err != nil || len(keys) != 0 {
		t.Fatalf("ReadTrusted of no file: %v, %v", keys, err)
	}
	if err := os.WriteFile(path, []byte("# publishers\n"+a.String()+" "+b.String()+"  # a and b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		edit    func() ([]PublicKey, error)
		dropped string // the keys dropped, as String joins them
		want    string // the file after
	}{
		{"add", func() ([]PublicKey, error) { return AddTrusted(pathFile(path), bound1(c, "demo")) }, "",
			"# publishers\n" + a.String() + " " + b.String() + "  # a and b\ndemo=" + c.String() + "\n"},
		{"add again, bound otherwise", func() ([]PublicKey, error) { return AddTrusted(pathFile(path), c) }, "demo=" + c.String(),
			"# publishers\n" + a.String() + " " + b.String() + "  # a and b\n" + c.String() + "\n"},
		{"remove one of a line's keys", func() ([]PublicKey, error) { return RemoveTrusted(pathFile(path), a.ID()) }, a.String(),
			"# publishers\n" + b.String() + "  # a and b\n" + c.String() + "\n"},
		{"remove a line's last key", func() ([]PublicKey, error) { return RemoveTrusted(pathFile(path), b.ID()) }, b.String(),
			"# publishers\n" + c.String() + "\n"},
		{"remove a key not there", func() ([]PublicKey, error) { return RemoveTrusted(pathFile(path), b.ID()) }, "",
			"# publishers\n" + c.String() + "\n"},
	}
	for _, s := range steps {
		dropped, err := s.edit()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var got []string
		for _, k := range dropped {
			got = append(got, k.String())
		}
		if strings.Join(got, " ") != s.dropped {
			t.Errorf("%s: dropped %q, want %q", s.name, got, s.dropped)
		}
		if data, _ := os.ReadFile(path); string(data) != s.want {
			t.Errorf("%s: file\n%s\nwant\n%s", s.name, data, s.want)
		}
	}
	if keys, err := ReadTrusted(path); err != nil || len(keys) != 1 || keys[0].String() != c.String() {
		t.Errorf("ReadTrusted: %v, %v", keys, err)
	}
	if err := os.WriteFile(path, []byte("nonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AddTrusted(pathFile(path), a); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), path) {
		t.Errorf("AddTrusted to a malformed file: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "nonsense\n" {
		t.Errorf("a refused edit changed the file: %q", data)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("%d files left, want the trusted-keys file only", len(ents))
	}
}

// bound1 returns pub bound to the repository name.
func bound1(pub PublicKey, name string) PublicKey {
	pub.Repo = name
	return pub
}

// pathFile is the trusted-keys file at a path.
type pathFile string

func (p pathFile) Name() string              { return string(p) }
func (p pathFile) Read() ([]byte, error)     { return os.ReadFile(string(p)) }
func (p pathFile) Replace(data []byte) error { return os.WriteFile(string(p), data, 0o644) }

// TestTrustedFileBadLine reads, and refuses to edit, a trusted-keys file whose second line
// is not a key: the error names the file and the line, which the user is to fix, and the
// file stays as it was.
func TestTrustedFileBadLine(t *testing.T) {
	a := newKey(t).Public()
	path := filepath.Join(t.TempDir(), "trusted-keys")
	data := "# publishers\n" + a.String() + " junk\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, do := range map[string]func() error{
		"read":   func() error { _, err := ReadTrusted(path); return err },
		"add":    func() error { _, err := AddTrusted(pathFile(path), newKey(t).Public()); return err },
		"remove": func() error { _, err := RemoveTrusted(pathFile(path), a.ID()); return err },
	} {
		err := do()
		var le *LineError
		if !errors.Is(err, ErrKey) || !errors.As(err, &le) || le.Path != path || le.Line != 2 {
			t.Errorf("%s: %v; want ErrKey in a *LineError of %s, line 2", name, err, path)
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Errorf("%s changed the file: %q", name, got)
		}
	}
}

// TestTrustedFileCommas removes a key from a line of keys separated by commas, with no
// comment: the keys left, a bound one among them, are written as they were, separated by
// a space, and the other lines stay as they were.
func TestTrustedFileCommas(t *testing.T) {
	a, b, c, d := newKey(t).Public(), newKey(t).Public(), newKey(t).Public(), newKey(t).Public()
	path := filepath.Join(t.TempDir(), "trusted-keys")
	data := "demo=" + a.String() + "," + b.String() + ", " + c.String() + "\n" + d.String() + ",\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	dropped, err := RemoveTrusted(pathFile(path), b.ID())
	if err != nil || len(dropped) != 1 || dropped[0].String() != b.String() {
		t.Fatalf("RemoveTrusted: %v, %v; want %s dropped", dropped, err, b)
	}
	want := "demo=" + a.String() + " " + c.String() + "\n" + d.String() + ",\n"
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("file\n%s\nwant\n%s", got, want)
	}
	keys, err := ReadTrusted(path)
	if err != nil || len(keys) != 3 || keys[0].Repo != "demo" || keys[0].ID() != a.ID() {
		t.Errorf("ReadTrusted: %v, %v; want demo=%s, %s and %s", keys, err, a, c, d)
	}
}
