package install

import (
	"archive/tar"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
	"pkg/tarutil"
)

// timedEntries is an archive whose every member has its own modification time: directories
// listed before what they hold (whose creation changes them), files small and cloneable,
// a symlink and a hardlink.
func timedEntries() []tar.Header {
	at := func(day int) time.Time { return time.Date(2021, 3, day, 10, 20, 30, 0, time.UTC) }
	big := int64(3*tarutil.Alignment + 17)
	return []tar.Header{
		{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: at(1)},
		{Name: "usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: at(2)},
		{Name: "usr/bin/tool", Typeflag: tar.TypeReg, Mode: 0o755, Size: 9, ModTime: at(3)},
		{Name: "usr/share/", Typeflag: tar.TypeDir, Mode: 0o555, ModTime: at(4)},
		{Name: "usr/share/big", Typeflag: tar.TypeReg, Mode: 0o644, Size: big, ModTime: at(5)},
		{Name: "usr/share/latest", Typeflag: tar.TypeSymlink, Linkname: "big", ModTime: at(6)},
		{Name: "usr/share/same", Typeflag: tar.TypeLink, Linkname: "usr/share/big", ModTime: at(7)},
		{Name: "old", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3, ModTime: time.Unix(-86400, 0)},
	}
}

func timedTar(t *testing.T, dir string) (raw, aligned string) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range timedEntries() {
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size))); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	raw = filepath.Join(dir, "timed.tar")
	if err := os.WriteFile(raw, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "timed-aligned.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := tarutil.Align(f, bytes.NewReader(b.Bytes()), tarutil.Limits{}); err != nil {
		t.Fatal(err)
	}
	return raw, f.Name()
}

func lmtime(t *testing.T, path string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Mtim.Unix())
}

// TestInstallKeepsMtimes installs an archive, cloned on XFS and copied elsewhere, and
// checks that every member has the modification time of its header, as GNU tar -x leaves
// it: a hardlink has its target's.
func TestInstallKeepsMtimes(t *testing.T) {
	gnutar, err := exec.LookPath("tar")
	if err != nil {
		testfs.Unavailable(t, "no tar to compare with")
	}
	for _, kind := range []string{"tmp", "xfs"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			if kind == "xfs" {
				base = testfs.Mount(t, "xfs")
			}
			raw, aligned := timedTar(t, base)
			r := openRoot(t, filepath.Join(base, "root"))
			defer r.Close()
			p := pkgOf("timed", "1")
			p.Bin = nil
			if _, err := r.installFrom(aligned, p); err != nil {
				t.Fatal(err)
			}
			extracted := filepath.Join(base, "extracted")
			if err := os.Mkdir(extracted, 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(gnutar, "-xf", raw, "-C", extracted).CombinedOutput(); err != nil {
				t.Fatalf("tar -x: %v: %s", err, out)
			}
			byName := make(map[string]time.Time)
			for _, h := range timedEntries() {
				byName[strings.TrimSuffix(h.Name, "/")] = h.ModTime
			}
			for _, h := range timedEntries() {
				name := strings.TrimSuffix(h.Name, "/")
				want := h.ModTime
				if h.Typeflag == tar.TypeLink {
					want = byName[h.Linkname]
				}
				got := lmtime(t, filepath.Join(r.pkgDir("timed"), name))
				if !got.Equal(want) {
					t.Errorf("%s: installed with mtime %v, want %v", name, got.UTC(), want)
				}
				if byTar := lmtime(t, filepath.Join(extracted, name)); !got.Equal(byTar) {
					t.Errorf("%s: installed with mtime %v, tar -x gives %v", name, got.UTC(), byTar.UTC())
				}
			}
		})
	}
}

// TestInstallNPMTimes installs the same archive as an npm package: its members keep the
// time of their install, as npm, pnpm and bun leave node_modules, not their headers'.
func TestInstallNPMTimes(t *testing.T) {
	base := t.TempDir()
	var es []entry // timedEntries under the npm tarball's package/, of time 0 (alignedTar)
	for _, h := range timedEntries() {
		e := entry{name: "package/" + h.Name, typ: h.Typeflag, mode: h.Mode, data: strings.Repeat("x", int(h.Size)), link: h.Linkname}
		if h.Typeflag == tar.TypeLink {
			e.link = "package/" + h.Linkname
		}
		es = append(es, e)
	}
	r := openRoot(t, filepath.Join(base, "root"))
	defer r.Close()
	p := npmPkg("timed", "1.0.0")
	p.Bin = nil
	before := time.Now().Add(-time.Second) // the kernel stamps from a coarse clock
	if _, err := r.Apply(t.Context(), []*Staged{stageIn(t, r, base, p, es)}, nil); err != nil {
		t.Fatal(err)
	}
	installed := r.path("lib", "node_modules", ".pnpm", "timed@1.0.0", "node_modules", "timed")
	for _, h := range timedEntries() {
		name := strings.TrimSuffix(h.Name, "/")
		if got := lmtime(t, filepath.Join(installed, name)); got.Before(before) {
			t.Errorf("%s: installed with mtime %v, before the install (%v): the archive's", name, got.UTC(), before.UTC())
		}
	}
}

// BenchmarkSetTime measures what setting a member's time costs a file: one utimensat on
// the descriptor install has open, on XFS when it can be mounted.
func BenchmarkSetTime(b *testing.B) {
	for _, fs := range []string{"tmp", "xfs"} {
		b.Run(fs, func(b *testing.B) {
			base := b.TempDir()
			if fs == "xfs" {
				base = testfs.Mount(b, "xfs")
			}
			f, err := os.Create(filepath.Join(base, "f"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			s := &stager{}
			m := &tarutil.Member{Name: "f", MTime: 1600000000}
			b.ReportAllocs()
			for b.Loop() {
				m.MTime++ // a change each time, as for a new file
				if err := s.setTime(int(f.Fd()), m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTimespecRange: a member's time within the platform's seconds is kept to the second,
// and one past them (after January 2038, or before 1901, on 386 and arm) is held at the
// nearest it can set, not wrapped around to another century.
func TestTimespecRange(t *testing.T) {
	wide := unsafe.Sizeof(unix.Timespec{}.Sec) == 8
	for _, c := range []struct{ sec, want, want32 int64 }{
		{0, 0, 0},
		{-86400, -86400, -86400},
		{1 << 31, 1 << 31, 1<<31 - 1},
		{1 << 40, 1 << 40, 1<<31 - 1},
		{-1 << 40, -1 << 40, -1 << 31},
	} {
		want := c.want
		if !wide {
			want = c.want32
		}
		if ts := timespec(c.sec); int64(ts.Sec) != want || ts.Nsec != 0 {
			t.Errorf("timespec(%d) = %d s %d ns, want %d s", c.sec, ts.Sec, ts.Nsec, want)
		}
	}
}
