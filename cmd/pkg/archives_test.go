package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pkg/internal/testfs"
	"pkg/repo"
)

// treeFiles are what each test archive holds, as modes, contents and symlink targets.
var treeFiles = []struct {
	name string
	mode fs.FileMode
	data string
}{
	{"usr/bin/hello", 0o755, "#!/bin/sh\necho hello from an archive\n"},
	{"usr/share/doc/hello/README", 0o644, "says hello\n"},
	{"usr/share/hello/big", 0o600, strings.Repeat("0123456789abcdef", 1000)},
	{"var/lib/hello/", fs.ModeDir | 0o750, ""},
	{"usr/bin/readme", fs.ModeSymlink, "../share/doc/hello/README"},
}

// writeTree writes treeFiles under dir.
func writeTree(t *testing.T, dir string) {
	t.Helper()
	for _, f := range treeFiles {
		p := filepath.Join(dir, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case f.mode.IsDir():
			err = os.Mkdir(p, f.mode.Perm())
		case f.mode&fs.ModeSymlink != 0:
			err = os.Symlink(f.data, p)
		default:
			err = os.WriteFile(p, []byte(f.data), f.mode)
		}
		if err == nil && f.mode&fs.ModeSymlink == 0 {
			err = os.Chmod(p, f.mode.Perm()) // past the umask
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// writeZip writes treeFiles, under top, as a zip made with archive/zip, keeping their
// Unix modes, and returns its path.
func writeZip(t *testing.T, dir, top string) string {
	t.Helper()
	path := filepath.Join(dir, "release.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, m := range treeFiles {
		h := &zip.FileHeader{Name: top + m.name, Method: zip.Deflate}
		mode := m.mode
		if mode&fs.ModeSymlink != 0 {
			mode |= 0o777
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, m.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInstallArchiveFormats adds archives made the way each ecosystem makes them to a
// repository, installs each, and compares the installed tree with what the ecosystem's
// own tool extracts: .debs built by dpkg-deb, with each compression, against dpkg-deb -x;
// a zip made by archive/zip against unzip; a .tar.bz2 made by tar -cjf against tar -x.
func TestInstallArchiveFormats(t *testing.T) {
	type format struct {
		name    string
		tools   []string
		build   func(t *testing.T, src, tree string) string // returns the archive's path
		extract []string                                    // the command extracting ARCHIVE into the current directory
		flags   []string                                    // for repo add
		bin     string
	}
	deb := func(comp string) format {
		return format{"deb " + comp, []string{"dpkg-deb"}, func(t *testing.T, src, tree string) string {
			os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755)
			control := "Package: hello\nVersion: 1:1.2.0-1\nArchitecture: all\nMaintainer: N <n@example.com>\nDepends: libc6 (>= 2.34)\nDescription: says hello\n over lines\n"
			if err := os.WriteFile(filepath.Join(tree, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
				t.Fatal(err)
			}
			testfs.Run(t, src, "dpkg-deb", "--root-owner-group", "-Z", comp, "--build", tree, "hello.deb")
			return filepath.Join(src, "hello.deb")
		}, []string{"dpkg-deb", "-x", "ARCHIVE", "."}, nil, "usr/bin/hello"}
	}
	formats := []format{
		deb("xz"), deb("zstd"), deb("gzip"), deb("none"),
		{"zip", []string{"unzip"}, func(t *testing.T, src, tree string) string { return writeZip(t, src, "hello-1.0/") },
			[]string{"unzip", "-q", "ARCHIVE"}, []string{"--name", "hello", "--version", "1.0"}, "hello-1.0/usr/bin/hello"},
		{"tar.bz2", []string{"tar", "bzip2"}, func(t *testing.T, src, tree string) string {
			testfs.Run(t, tree, "tar", "-cjf", "../hello.tar.bz2", ".")
			return filepath.Join(src, "hello.tar.bz2")
		}, []string{"tar", "-xf", "ARCHIVE"}, []string{"--name", "hello", "--version", "1.0"}, "usr/bin/hello"},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			testfs.NeedTools(t, f.tools...)
			base := t.TempDir()
			src, dir := filepath.Join(base, "src"), filepath.Join(base, "repo")
			tree := filepath.Join(src, "tree")
			writeTree(t, tree)
			archive := f.build(t, src, tree)
			e := newEnv(t, base, serve(t, dir))
			_, stderr := e.ok(append([]string{"repo", "add", dir, archive, "--bin", f.bin}, f.flags...)...)
			if f.flags == nil { // the control file's Depends: libc6, as a package of the repository
				stub := filepath.Join(base, "libc6")
				os.MkdirAll(filepath.Join(stub, "usr/share/doc/libc6"), 0o755)
				testfs.Run(t, stub, "tar", "-cf", "../libc6.tar", ".")
				e.ok("repo", "add", dir, filepath.Join(base, "libc6.tar"), "--name", "libc6", "--version", "2.36")
			}
			e.ok("install", "hello")

			want := filepath.Join(base, "extracted")
			os.Mkdir(want, 0o755)
			args := append([]string(nil), f.extract...)
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "ARCHIVE", archive)
			}
			testfs.Run(t, want, args...)
			got, exp := testfs.Tree(t, filepath.Join(e.root, "pkgs", "hello")), testfs.Tree(t, want)
			delete(got, ".")
			delete(exp, ".")
			testfs.SameTree(t, "installed "+f.name, got, exp)
			if out, err := exec.Command(filepath.Join(e.root, "bin", "hello")).CombinedOutput(); err != nil || string(out) != "hello from an archive\n" {
				t.Errorf("bin/hello: %q, %v", out, err)
			}

			ix := readIndexFile(t, dir)
			wantVersion := "1.0"
			if f.flags == nil { // from the control file
				wantVersion = "1:1.2.0-1"
				if p := ix.Packages[0]; p.Summary != "says hello" || repo.JoinRequirements(p.Depends) != "libc6>=2.34" {
					t.Errorf("index entry from the control file: summary %q, depends %q", p.Summary, p.Depends)
				}
				if want := "hello 1:1.2.0-1 depends on libc6>=2.34, which " + dir + " does not offer (yet)"; !strings.Contains(stderr, want) {
					t.Errorf("repo add of a .deb with Depends: stderr %q lacks %q", stderr, want)
				}
				ix.Packages = slices.DeleteFunc(ix.Packages, func(p repo.Package) bool { return p.Name == "libc6" })
			}
			ext := strings.TrimPrefix(filepath.Ext(archive), ".")
			if ext == "bz2" {
				ext = "tar.bz2"
			}
			if p := ix.Packages[0]; len(ix.Packages) != 1 || p.Name != "hello" || p.Version != wantVersion || p.Archive != "hello-"+strings.ReplaceAll(wantVersion, ":", "_")+"."+ext {
				t.Errorf("index: %+v, want hello %s in hello-%s.%s", ix.Packages, wantVersion, wantVersion, ext)
			}
		})
	}
}

func readIndexFile(t *testing.T, dir string) *repo.Index {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ix repo.Index
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	return &ix
}
