package install

import (
	"archive/tar"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pkg/db"
)

// TestVerify installs a package, damages its tree one way per case, and checks that Verify
// reports exactly that damage.
func TestVerify(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, dir, root string)
		want   []string
	}{
		{"intact", func(*testing.T, string, string) {}, nil},
		{"mode", func(t *testing.T, dir, _ string) { must(t, os.Chmod(filepath.Join(dir, "libexec/tool"), 0o700)) },
			[]string{"tool 1: modified libexec/tool (mode)"}},
		{"setuid", func(t *testing.T, dir, _ string) {
			must(t, os.Chmod(filepath.Join(dir, "libexec/tool"), os.ModeSetuid|0o755))
		},
			[]string{"tool 1: modified libexec/tool (mode)"}},
		{"dir-mode", func(t *testing.T, dir, _ string) { must(t, os.Chmod(filepath.Join(dir, "share"), 0o777)) },
			[]string{"tool 1: modified share (mode)"}},
		{"size", func(t *testing.T, dir, _ string) { appendTo(t, filepath.Join(dir, "libexec/tool"), "x") },
			[]string{"tool 1: modified libexec/tool (size)"}},
		{"content", func(t *testing.T, dir, _ string) { flipByte(t, filepath.Join(dir, "share/big"), 9000) },
			[]string{"tool 1: modified share/big (content)", "tool 1: modified share/same (content)"}},
		{"mode-and-content", func(t *testing.T, dir, _ string) {
			flipByte(t, filepath.Join(dir, "libexec/tool"), 3)
			must(t, os.Chmod(filepath.Join(dir, "libexec/tool"), 0o644))
		}, []string{"tool 1: modified libexec/tool (mode, content)"}},
		{"symlink-target", func(t *testing.T, dir, _ string) {
			must(t, os.Remove(filepath.Join(dir, "share/latest")))
			must(t, os.Symlink("same", filepath.Join(dir, "share/latest")))
		}, []string{"tool 1: modified ROOT/share/latest", "tool 1: modified share/latest (symlink target)"}},
		{"file-to-symlink", func(t *testing.T, dir, _ string) {
			must(t, os.Remove(filepath.Join(dir, "libexec/tool")))
			must(t, os.Symlink("/bin/sh", filepath.Join(dir, "libexec/tool")))
		}, []string{"tool 1: modified ROOT/libexec/tool", "tool 1: modified libexec/tool (type)"}},
		{"prefix-replaced", func(t *testing.T, _, root string) {
			must(t, os.Remove(filepath.Join(root, "share/big")))
			must(t, os.WriteFile(filepath.Join(root, "share/big"), []byte("mine"), 0o644))
		}, []string{"tool 1: modified ROOT/share/big"}},
		{"prefix-missing", func(t *testing.T, _, root string) { must(t, os.Remove(filepath.Join(root, "share/same"))) },
			[]string{"tool 1: missing ROOT/share/same"}},
		{"dir-to-file", func(t *testing.T, dir, _ string) {
			must(t, os.Remove(filepath.Join(dir, "ro")))
			must(t, os.WriteFile(filepath.Join(dir, "ro"), nil, 0o555))
		}, []string{"tool 1: modified ro (type)"}},
		{"missing", func(t *testing.T, dir, _ string) { must(t, os.Remove(filepath.Join(dir, "share/same"))) },
			[]string{"tool 1: missing share/same"}},
		{"missing-parent", func(t *testing.T, dir, _ string) { must(t, os.RemoveAll(filepath.Join(dir, "libexec"))) },
			[]string{"tool 1: missing libexec", "tool 1: missing libexec/tool"}},
		{"extra", func(t *testing.T, dir, _ string) {
			must(t, os.WriteFile(filepath.Join(dir, "share/new"), nil, 0o644))
			must(t, os.MkdirAll(filepath.Join(dir, "extra/deep"), 0o755))
		}, []string{"tool 1: extra extra", "tool 1: extra share/new"}},
		{"package-dir", func(t *testing.T, dir, _ string) { must(t, os.RemoveAll(dir)) },
			[]string{"tool 1: missing ROOT/pkgs/tool (package directory)"}},
		{"package-dir-file", func(t *testing.T, dir, _ string) {
			must(t, os.RemoveAll(dir))
			must(t, os.WriteFile(dir, nil, 0o644))
		}, []string{"tool 1: modified ROOT/pkgs/tool (type)"}},
		{"command-link", func(t *testing.T, _, root string) {
			must(t, os.Remove(filepath.Join(root, "bin/tool")))
			must(t, os.Symlink("/bin/sh", filepath.Join(root, "bin/tool")))
		}, []string{"tool 1: modified " + "ROOT/bin/tool (command link)"}},
		{"command-foreign", func(t *testing.T, _, root string) {
			must(t, os.Remove(filepath.Join(root, "bin/tool")))
			must(t, os.WriteFile(filepath.Join(root, "bin/tool"), []byte("mine\n"), 0o755))
		}, []string{"tool 1: modified " + "ROOT/bin/tool (command link, foreign)"}},
		{"command-missing", func(t *testing.T, _, root string) { must(t, os.Remove(filepath.Join(root, "bin/tool"))) },
			[]string{"tool 1: missing " + "ROOT/bin/tool (command link)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			r := openRoot(t, filepath.Join(base, "root"))
			defer r.Close()
			if _, err := r.installFrom(alignedTar(t, base, version1()), pkgOf("tool", "1")); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, r.pkgDir("tool"), r.Dir())
			problems, err := r.Verify()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, strings.ReplaceAll(describe(p), r.Dir(), "ROOT"))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Verify:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestVerifyNotInstalled(t *testing.T) {
	r := openRoot(t, t.TempDir())
	defer r.Close()
	if _, err := r.Verify("nope"); !errors.Is(err, db.ErrNotInstalled) || !strings.HasSuffix(err.Error(), ": nope") {
		t.Errorf("Verify(nope) = %v", err)
	}
	if problems, err := r.Verify(); err != nil || len(problems) != 0 {
		t.Errorf("Verify() of an empty root = %v, %v", problems, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, name, s string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func flipByte(t *testing.T, name string, off int64) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	must(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	must(t, err)
}

// BenchmarkVerify checks an installed tree of 2,000 files of 100 B to 12 KiB in 40
// directories, from the page cache.
func BenchmarkVerify(b *testing.B) {
	base := b.TempDir()
	var entries []entry
	for i := range 2000 {
		dir := fmt.Sprintf("d%02d/", i%40)
		if i < 40 {
			entries = append(entries, entry{name: dir, typ: tar.TypeDir, mode: 0o755})
		}
		entries = append(entries, entry{name: fmt.Sprintf("%sf%d", dir, i), typ: tar.TypeReg, mode: 0o644, data: strings.Repeat("x", 100+i*6)})
	}
	r := openRoot(b, filepath.Join(base, "root"))
	defer r.Close()
	p := pkgOf("tree", "1")
	p.Bin = nil
	if _, err := r.installFrom(alignedTar(b, base, entries), p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if problems, err := r.Verify(); err != nil || len(problems) != 0 {
			b.Fatal(problems, err)
		}
	}
}

// closedTree is a package whose modes keep its owner out: directories 000, 0600 and 0200
// with files in them, and files 000 and 0200.
func closedTree() []entry {
	var es []entry
	for _, d := range []struct {
		name string
		mode int64
	}{{"shut", 0}, {"rw", 0o600}, {"wo", 0o200}} {
		es = append(es,
			entry{name: d.name + "/", typ: tar.TypeDir, mode: d.mode},
			entry{name: d.name + "/sub/", typ: tar.TypeDir, mode: 0o755},
			entry{name: d.name + "/sub/f", typ: tar.TypeReg, mode: 0o644, data: "in " + d.name},
			entry{name: d.name + "/f", typ: tar.TypeReg, mode: 0o644, data: "in " + d.name})
	}
	return append(es,
		entry{name: "none", typ: tar.TypeReg, mode: 0, data: "none"},
		entry{name: "wonly", typ: tar.TypeReg, mode: 0o200, data: "write only"},
		entry{name: "open", typ: tar.TypeReg, mode: 0o644, data: "open"})
}

// TestVerifyClosed installs, as nobody, a package whose modes keep its owner out: Verify
// finds it intact, by its metadata where it cannot read; a reinstall and a remove keep
// nothing of it in .pkg/saved, as nothing in it changed. Then Verify reports what the user
// changed and it could not read, and a remove keeps that tree whole.
func TestVerifyClosed(t *testing.T) {
	if asNobody(t) {
		return
	}
	base := t.TempDir()
	t.Cleanup(func() { removeTree(base) }) // before t.TempDir's, which cannot enter a closed directory
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	p := pkgOf("closed", "1")
	p.Bin = nil
	tarPath := alignedTar(t, base, closedTree())
	if _, err := r.installFrom(tarPath, p); err != nil {
		t.Fatal(err)
	}
	if problems, err := r.Verify(); err != nil || len(problems) != 0 {
		t.Errorf("Verify of the intact tree = %v, %v", problems, err)
	}
	if _, err := r.installFrom(tarPath, p); err != nil {
		t.Fatal(err)
	}
	if s, saved := r.Salvaged(), r.Saved(); len(s) != 0 || len(saved) != 0 {
		t.Errorf("reinstall kept %+v in %q", s, saved)
	}
	if problems, err := r.Verify(); err != nil || len(problems) != 0 {
		t.Errorf("Verify after the reinstall = %v, %v", problems, err)
	}
	dir := r.pkgDir("closed")
	// ctime comes from the kernel's coarse clock, up to a tick (10 ms at HZ=100) behind the
	// install's stamp: changes within that tick of the commit look installed (unchanged).
	time.Sleep(20 * time.Millisecond)
	must(t, os.Chmod(filepath.Join(dir, "none"), 0o600)) // the user reads it, and closes it again
	must(t, os.Chmod(filepath.Join(dir, "none"), 0))
	must(t, os.Chmod(filepath.Join(dir, "rw"), 0o700))
	must(t, os.Chmod(filepath.Join(dir, "rw"), 0o600))
	must(t, os.Chmod(filepath.Join(dir, "open"), 0))
	problems, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, describe(p))
	}
	want := []string{"closed 1: unreadable none (permission denied)", "closed 1: modified open (mode)",
		"closed 1: unreadable open (permission denied)", "closed 1: unreadable rw (permission denied)"}
	if !slices.Equal(got, want) {
		t.Errorf("Verify after the user's changes:\n got %q\nwant %q", got, want)
	}
	must(t, os.Chmod(filepath.Join(dir, "open"), 0o644))
	if err := r.uninstall("closed"); err != nil {
		t.Fatal(err)
	}
	if s := r.Salvaged(); len(s) != 1 || s[0].Tree == "" { // what it cannot read may be the user's
		t.Errorf("remove of the changed tree kept %+v, want it whole", s)
	}
	assertEmpty(t, r)
}

// TestVerifySearchOnly checks, as nobody, the files of a directory its owner may search and
// not list (mode 0100): a directory's listing and its files are checked on one descriptor
// where it can be read, and a changed file in this one is reported all the same.
func TestVerifySearchOnly(t *testing.T) {
	if asNobody(t) {
		return
	}
	base := t.TempDir()
	t.Cleanup(func() { removeTree(base) })
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	p := pkgOf("xo", "1")
	p.Bin = nil
	tarPath := alignedTar(t, base, []entry{
		{name: "xo/", typ: tar.TypeDir, mode: 0o100},
		{name: "xo/f", typ: tar.TypeReg, mode: 0o644, data: "as installed"},
	})
	if _, err := r.installFrom(tarPath, p); err != nil {
		t.Fatal(err)
	}
	if problems, err := r.Verify(); err != nil || len(problems) != 0 {
		t.Errorf("Verify of the intact tree = %v, %v", problems, err)
	}
	must(t, os.WriteFile(filepath.Join(r.pkgDir("xo"), "xo", "f"), []byte("as CHANGED  "), 0o644))
	problems, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || describe(problems[0]) != "xo 1: modified xo/f (content)" {
		t.Errorf("Verify after a change = %v, want xo/f's content", problems)
	}
}
