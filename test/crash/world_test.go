package crash

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/internal/testfs"
	"pkg/pkgtest/testrepo"
	"pkg/repo"
)

// member is one entry of a generated package.
type member struct {
	name string // cleaned, as tarutil records it
	typ  byte
	mode fs.FileMode
	data []byte
	link string
}

// spec is one version of a generated package.
type spec struct {
	name, version string
	kind          string // "" or repo.KindNPM
	depends       []repo.Requirement
	bin           []string
	members       []member
	sha           string // of the published archive
}

// world is every package version a test published: name → version → spec.
type world map[string]map[string]*spec

func (w world) add(s *spec) {
	if w[s.name] == nil {
		w[s.name] = map[string]*spec{}
	}
	w[s.name][s.version] = s
}

// publish writes each spec as a gzipped tar into dir and adds it to dir's index.
func publish(t testing.TB, dir string, specs ...*spec) world {
	t.Helper()
	w := world{}
	for _, s := range specs {
		archive := filepath.Join(t.TempDir(), s.name+"-"+s.version+".tar.gz")
		if err := os.WriteFile(archive, s.archive(t), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := fetch.Inspect(t.Context(), archive)
		if err != nil {
			t.Fatal(err)
		}
		res, err := repo.Add(t.Context(), dir, archive, repo.Package{Name: s.name, Version: s.version, Kind: s.kind, Depends: s.depends,
			Bin: testrepo.Commands(s.bin...), Summary: "generated for crash tests", InstalledSize: st.Bytes, Files: st.Files}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.sha = res.Package.SHA256
		w.add(s)
	}
	return w
}

func (s *spec) archive(t testing.TB) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	mtime := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, m := range s.members {
		h := &tar.Header{Typeflag: m.typ, Name: m.name, Linkname: m.link, Mode: int64(m.mode), ModTime: mtime, Format: tar.FormatPAX}
		if m.typ == tar.TypeDir {
			h.Name += "/"
		}
		if m.typ == tar.TypeReg {
			h.Size = int64(len(m.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// records returns what the database should record for s, sorted by path like db.Files.
func (s *spec) records() []db.File {
	digests := map[string][32]byte{}
	var files []db.File
	for _, m := range s.members {
		f := db.File{Path: m.name, Type: m.typ, Mode: m.mode}
		switch m.typ {
		case tar.TypeReg:
			f.Size, f.SHA256 = int64(len(m.data)), sha256.Sum256(m.data)
			digests[m.name] = f.SHA256
		case tar.TypeLink:
			f.SHA256 = digests[m.link]
		case tar.TypeSymlink:
			f.SHA256 = sha256.Sum256([]byte(m.link))
		}
		files = append(files, f)
	}
	sortFiles(files)
	return files
}

func sortFiles(files []db.File) {
	slices.SortFunc(files, func(a, b db.File) int { return strings.Compare(a.Path, b.Path) })
}

// content returns n deterministic bytes for file i of generation gen.
func content(i, gen, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(i), byte(i >> 8), byte(i >> 16), byte(gen)})
	r.Read(b)
	return b
}

// appSpec builds version v (1 or 2) of a package of about files files in 20 directories
// (under opt/NAME, its command in bin/):
// most small (written), a quarter between 4 and 20 KiB and one in twenty up to 200 KiB
// (cloned), with a read-only directory, hardlinks and symlinks. Version 2 changes a tenth
// of the files, drops a twentieth, adds some, changes modes and adds a command.
func appSpec(name, v string, files int, depends ...string) *spec {
	two := v == "2"
	s := &spec{name: name, version: v, depends: testrepo.Requires(depends...), bin: []string{"bin/" + name}}
	dir := func(n string, mode fs.FileMode) {
		s.members = append(s.members, member{name: n, typ: tar.TypeDir, mode: mode})
	}
	file := func(n string, mode fs.FileMode, data []byte) {
		s.members = append(s.members, member{name: n, typ: tar.TypeReg, mode: mode, data: data})
	}
	dir("bin", 0o755)
	file("bin/"+name, 0o755, []byte("#!/bin/sh\necho "+name+" "+v+"\n"))
	if two {
		s.bin = append(s.bin, "bin/"+name+"-helper")
		file("bin/"+name+"-helper", 0o755, []byte("#!/bin/sh\necho helper\n"))
	}
	// The rest under opt/NAME: the package's own in the prefix, where the others' are too.
	top := "opt/" + name + "/"
	dir("opt", 0o755)
	dir(top[:len(top)-1], 0o755)
	for d := range 20 {
		mode := fs.FileMode(0o755)
		if two && d == 5 {
			mode = 0o750
		}
		dir(fmt.Sprintf("%sd%02d", top, d), mode)
	}
	sizes := rand.New(rand.NewPCG(1, 2))
	for i := range files {
		n := 1 + sizes.IntN(4000)
		switch i % 20 {
		case 14, 15, 16, 17, 18:
			n = 4096 + sizes.IntN(16<<10)
		case 19:
			n = 64<<10 + sizes.IntN(136<<10)
		}
		if two && i%20 == 7 {
			continue
		}
		gen, mode := 1, fs.FileMode(0o644)
		if two && i%10 == 3 {
			gen = 2
		}
		if two && i%50 == 1 {
			mode = 0o600
		}
		if i%100 == 5 {
			mode = 0o755
		}
		file(fmt.Sprintf("%sd%02d/f%04d", top, i%20, i), mode, content(i, gen, n))
	}
	if two {
		dir(top+"new", 0o755)
		for i := range files / 20 {
			file(fmt.Sprintf("%snew/n%04d", top, i), 0o644, content(i, 3, 1+i*97%9000))
		}
	}
	dir(top+"ro", 0o555)
	file(top+"ro/readme", 0o444, []byte("read-only "+v+"\n"))
	link := func(typ byte, n, target string) {
		s.members = append(s.members, member{name: n, typ: typ, mode: 0o777, link: target})
	}
	link(tar.TypeLink, top+"d02/hard", top+"d02/f0002")
	if two {
		link(tar.TypeLink, top+"d03/hard2", top+"d03/f0003")
		link(tar.TypeSymlink, top+"latest", "d01/f0001")
	} else {
		link(tar.TypeSymlink, top+"latest", "d00/f0000")
	}
	for i := range s.members {
		if s.members[i].typ == tar.TypeLink {
			s.members[i].mode = 0o644 // a hardlink's header mode is its target's, as tar writes it
		}
	}
	return s
}

// libSpec builds a small package with no commands.
func libSpec(name, v string, depends ...string) *spec {
	return &spec{name: name, version: v, depends: testrepo.Requires(depends...), members: []member{
		{name: "lib", typ: tar.TypeDir, mode: 0o755},
		{name: "lib/" + name + ".so", typ: tar.TypeReg, mode: 0o644, data: content(7, 1, 9000)},
		{name: "lib/" + name + ".txt", typ: tar.TypeReg, mode: 0o644, data: []byte(name + " " + v + "\n")},
	}}
}

func TestMain(m *testing.M) {
	code := m.Run()
	testfs.RemovePkgBinary()
	os.Exit(code)
}

// env is the pkg binary with one root, cache and repository.
type env struct {
	t                      testing.TB
	bin, root, cache, repo string
}

func (e *env) command(args ...string) *exec.Cmd {
	full := append([]string{"--root", e.root, "--cache", e.cache, "--repo", e.repo}, args...)
	return exec.Command(e.bin, full...)
}

// initRoot creates the env's root, empty, as a first install would.
func (e *env) initRoot() {
	e.t.Helper()
	r, err := install.Open(context.Background(), e.root, install.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	r.Close()
}

// run runs pkg and returns its output and exit code.
func (e *env) run(args ...string) (stdout, stderr string, code int) {
	var o, er bytes.Buffer
	c := e.command(args...)
	c.Stdout, c.Stderr = &o, &er
	err := c.Run()
	if err != nil && c.ProcessState == nil {
		e.t.Fatalf("pkg %v: %v", args, err)
	}
	return o.String(), er.String(), c.ProcessState.ExitCode()
}

// ok runs pkg and fails the test unless it exits 0.
func (e *env) ok(args ...string) (stdout, stderr string) {
	e.t.Helper()
	o, er, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("pkg %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, o, er)
	}
	return o, er
}

// cmdName is the command a package's bin path provides.
func cmdName(bin string) string { return path.Base(bin) }
