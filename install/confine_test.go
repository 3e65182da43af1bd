package install

import (
	"archive/tar"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/internal/regfile"
	"pkg/repo"
	"pkg/tarutil"
)

// confineEntries is a benign package whose members the tests below turn hostile.
func confineEntries() []entry {
	return []entry{
		{name: "d/", typ: tar.TypeDir, mode: 0o755},
		{name: "d/f", typ: tar.TypeReg, mode: 0o644, data: "data"},
		{name: "d/l", typ: tar.TypeSymlink, link: "f"},
		{name: "ro/", typ: tar.TypeDir, mode: 0o555},
	}
}

// TestStageValidates passes Stage member lists that no archive could have produced and
// checks that it refuses each before creating anything.
func TestStageValidates(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	tarPath := alignedTar(t, base, confineEntries())
	good := scanMembers(t, tarPath)
	tests := []struct {
		name string
		edit func(ms []tarutil.Member) []tarutil.Member
		err  error
	}{
		{"dotdot", func(ms []tarutil.Member) []tarutil.Member { ms[1].Name = "../../../x"; return ms }, tarutil.ErrUnsafePath},
		{"absolute", func(ms []tarutil.Member) []tarutil.Member { ms[1].Name = "/tmp/x"; return ms }, tarutil.ErrUnsafePath},
		{"missing-parent", func(ms []tarutil.Member) []tarutil.Member { return ms[1:] }, tarutil.ErrParent},
		{"under-symlink", func(ms []tarutil.Member) []tarutil.Member {
			return append(ms, tarutil.Member{Name: "d/l/x", Type: tar.TypeReg, Mode: 0o644, Size: 4, Offset: ms[1].Offset})
		}, tarutil.ErrParent},
		{"symlink-escape", func(ms []tarutil.Member) []tarutil.Member { ms[2].Linkname = "../../x"; return ms }, tarutil.ErrSymlinkEscape},
		{"setuid", func(ms []tarutil.Member) []tarutil.Member { ms[1].Mode |= 0o4000; return ms }, tarutil.ErrSpecialBits},
		{"device", func(ms []tarutil.Member) []tarutil.Member { ms[1].Type = tar.TypeChar; return ms }, tarutil.ErrType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := tt.edit(append([]tarutil.Member(nil), good...))
			_, err := r.Stage(context.Background(), tarPath, pkgOf("tool", "1"), ms)
			var me *tarutil.MemberError
			if !errors.Is(err, tt.err) || !errors.As(err, &me) {
				t.Errorf("Stage: %v, want a *MemberError for %v", err, tt.err)
			}
			if ents, _ := os.ReadDir(r.path(".pkg", "staging")); len(ents) != 0 {
				t.Errorf("staging holds %v", ents)
			}
		})
	}
}

func scanMembers(t *testing.T, tarPath string) []tarutil.Member {
	t.Helper()
	f, err := os.Open(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := tarutil.Scan(f)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestStagerResolvesNoSymlinks plants a symlink to a directory outside the staging directory
// where the stager expects a directory of its own, as a policy bug or a concurrent writer
// could, and checks that every step of staging refuses to go through it.
func TestStagerResolvesNoSymlinks(t *testing.T) {
	base := t.TempDir()
	tarPath := alignedTar(t, base, confineEntries())
	good := scanMembers(t, tarPath)
	for _, step := range []struct {
		name    string
		members []tarutil.Member
		run     func(s *stager, ms []tarutil.Member) error
	}{
		{"mkdir", []tarutil.Member{{Name: "d/sub", Type: tar.TypeDir, Mode: 0o755}}, (*stager).dirs},
		{"mkdir-deep", []tarutil.Member{{Name: "d/x/sub", Type: tar.TypeDir, Mode: 0o755}}, (*stager).dirs},
		{"files", good[1:2], func(s *stager, ms []tarutil.Member) error { return s.files(ms, -1) }},
		{"probe", []tarutil.Member{{Name: "d/big", Type: tar.TypeReg, Mode: 0o644, Size: tarutil.Alignment, Offset: 0}},
			func(s *stager, ms []tarutil.Member) error { _, err := s.probe(ms); return err }},
		{"symlink", good[2:3], (*stager).links},
		{"hardlink-target", []tarutil.Member{{Name: "h", Type: tar.TypeLink, Linkname: "d/f"}}, (*stager).links},
		{"chmod", []tarutil.Member{{Name: "d", Type: tar.TypeDir, Mode: 0o500}}, (*stager).modes},
	} {
		t.Run(step.name, func(t *testing.T) {
			dir, outside := filepath.Join(t.TempDir(), "staging"), t.TempDir()
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "f"), []byte("outside"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
				t.Fatal(err)
			}
			src, err := os.Open(tarPath)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			info, _ := src.Stat()
			s, err := stagerAt(context.Background(), src, info.Size(), dir, 0o022)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			// O_NOFOLLOW|O_DIRECTORY makes a symlink in last place ENOTDIR; RESOLVE_NO_SYMLINKS
			// makes one on the way ELOOP.
			if err := step.run(s, step.members); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
				t.Errorf("%s through a symlink: %v, want ELOOP or ENOTDIR", step.name, err)
			}
			ents, _ := os.ReadDir(outside)
			info, err = os.Stat(outside)
			if len(ents) != 1 || err != nil || info.Mode().Perm() != 0o700 && info.Mode().Perm() != 0o755 {
				t.Errorf("outside directory changed: %v, %v", ents, info.Mode())
			}
		})
	}
}

// TestOpenWalk checks the path walk used where openat2 is missing against openat2 itself.
func TestOpenWalk(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/b", "outside"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside", filepath.Join(dir, "a/l")); err != nil {
		t.Fatal(err)
	}
	dirfd, err := unix.Open(filepath.Join(dir, "a"), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dirfd)
	// The errors each opener gives: a symlink on the way is ELOOP to openat2's
	// RESOLVE_NO_SYMLINKS, ENOTDIR to the walk's O_NOFOLLOW|O_DIRECTORY.
	for _, tt := range []struct {
		name          string
		beneath, walk error
	}{
		{"b", nil, nil},
		{"l", unix.ENOTDIR, unix.ENOTDIR},
		{"l/x", unix.ELOOP, unix.ENOTDIR},
		{"../outside", unix.EXDEV, unix.EXDEV},
	} {
		for _, o := range []struct {
			open func(int, string, int) (int, error)
			want error
		}{{openBeneath, tt.beneath}, {openWalk, tt.walk}} {
			fd, err := o.open(dirfd, tt.name, unix.O_PATH|unix.O_DIRECTORY)
			if err == nil {
				unix.Close(fd)
			}
			if o.want == nil && err != nil || o.want != nil && !errors.Is(err, o.want) {
				t.Errorf("open %q: %v, want %v", tt.name, err, o.want)
			}
		}
	}
}

// TestStageCanceled checks that Stage with its context done builds nothing and says why.
func TestStageCanceled(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	tarPath := alignedTar(t, base, confineEntries())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Stage(ctx, tarPath, repo.Package{Name: "tool", Version: "1"}, scanMembers(t, tarPath)); !errors.Is(err, context.Canceled) {
		t.Errorf("Stage with its context done: %v", err)
	}
	if ents, _ := os.ReadDir(r.path(".pkg", "staging")); len(ents) != 0 {
		t.Errorf("staging holds %v", ents)
	}
}

// stagerAt is newStager of the directory dir.
func stagerAt(ctx context.Context, src *os.File, size int64, dir string, umask fs.FileMode) (*stager, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	s := newStager(ctx, src, size, fd, dir, umask)
	s.durable = durable.ForFS(fd)
	return s, nil
}

// TestStageTarNotRegular puts a symlink to another aligned tar, and a FIFO, where the
// cache's tar is, as another user of a shared cache may: Stage refuses each, cloning
// nothing of the link's target and not waiting for the FIFO's writer.
func TestStageTarNotRegular(t *testing.T) {
	base := t.TempDir()
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	decoy := alignedTar(t, base, confineEntries())
	ms := scanMembers(t, decoy)
	for _, tt := range []struct {
		name string
		make func(path string) error
		typ  fs.FileMode
	}{
		{"symlink", func(path string) error { return os.Symlink(decoy, path) }, fs.ModeSymlink},
		{"fifo", func(path string) error { return unix.Mkfifo(path, 0o644) }, fs.ModeNamedPipe},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "entry.tar")
			if err := tt.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := r.Stage(t.Context(), path, repo.Package{Name: "tool", Version: "1"}, ms)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second): // a hang's bound
				if w, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					w.Close() // the writer a FIFO's open waits for
				}
				t.Fatal("Stage still running after 10s")
			}
			var nr *regfile.NotRegularError
			if !errors.As(err, &nr) || nr.Type != tt.typ {
				t.Errorf("Stage of a %s: %v, want a *regfile.NotRegularError of type %v", tt.name, err, tt.typ)
			}
			if ents, _ := os.ReadDir(r.path(".pkg", "staging")); len(ents) != 0 {
				t.Errorf("staging holds %v", ents)
			}
		})
	}
}
