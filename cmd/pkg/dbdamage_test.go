package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/internal/testfs"
)

// dbPage is bbolt's page size on the machines pkg runs on (the OS page size).
var dbPage = os.Getpagesize()

// damagedDB is a root with hello (and libgreet) and fortunes installed, its database's
// bytes, and its files under pkgs/ and bin/ as installed.
type damagedDB struct {
	e         *env
	path      string
	good, sum []byte
	trees     map[string]string
	listed    []listed
}

func newDamagedDB(t *testing.T) *damagedDB {
	e := newEnv(t, t.TempDir(), serve(t, demoRepo))
	e.ok("install", "hello")
	e.ok("install", "fortunes")
	d := &damagedDB{e: e, path: filepath.Join(e.root, ".pkg", "db"), listed: e.list()}
	var err error
	if d.good, err = os.ReadFile(d.path); err != nil {
		t.Fatal(err)
	}
	if d.sum, err = os.ReadFile(d.path + ".sum"); err != nil {
		t.Fatal(err)
	}
	d.trees = d.tree(t)
	return d
}

// tree returns what pkgs/ and bin/ hold.
func (d *damagedDB) tree(t *testing.T) map[string]string {
	got := testfs.Tree(t, filepath.Join(d.e.root, "pkgs"))
	for k, v := range testfs.Tree(t, filepath.Join(d.e.root, "bin")) {
		got["bin/"+k] = v
	}
	return got
}

// damage writes the good database changed by fn, and its sum.
func (d *damagedDB) damage(t *testing.T, fn func(b []byte) []byte) {
	t.Helper()
	for _, p := range []string{d.path, d.path + ".sum"} {
		os.Remove(p)
	}
	if err := os.WriteFile(d.path, fn(bytes.Clone(d.good)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.path+".sum", d.sum, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkRefused checks that the root either works as before or every command refuses it
// with a *db.DamagedError naming the file and, in the CLI, the repair; and that no tree
// or link was touched.
func (d *damagedDB) checkRefused(t *testing.T) (refused bool) {
	t.Helper()
	r, err := install.Open(context.Background(), d.e.root, install.Options{})
	if err == nil {
		r.Close()
	} else if de := (*db.DamagedError)(nil); !errors.As(err, &de) || de.Path != d.path {
		t.Errorf("install.Open: %v; want nil or a *db.DamagedError about %s", err, d.path)
	}
	for _, args := range [][]string{{"list"}, {"verify"}, {"install", "libgreet"}} {
		_, stderr, code := d.e.pkg(args...)
		switch {
		case code == 0 && err == nil:
		case code == 1 && err != nil && strings.Contains(stderr, d.path+" is damaged") && strings.Contains(stderr, "verify --repair"):
		default:
			t.Errorf("pkg %v: exit %d (install.Open: %v)\n%s", args, code, err, stderr)
		}
	}
	testfs.SameTree(t, "pkgs/ and bin/", d.tree(t), d.trees)
	return err != nil
}

// Where a bbolt meta page records the high water mark (pages in use), the transaction id
// and the meta's checksum: after the page header (16 bytes), magic, version, page size and
// flags (4×4), the root bucket (2×8) and the freelist's page (8).
const (
	metaPages    = 16 + 16 + 16 + 8
	metaTxid     = metaPages + 8
	metaChecksum = metaTxid + 8
)

// metaField returns the field at off of meta page page of b.
func metaField(b []byte, page, off int) int {
	return int(binary.LittleEndian.Uint64(b[page*dbPage+off:]))
}

// newestMeta returns which of b's meta pages holds the last transaction.
func newestMeta(b []byte) int {
	if metaField(b, 1, metaTxid) > metaField(b, 0, metaTxid) {
		return 1
	}
	return 0
}

// TestDamagedDatabase damages a root's database every way a disk or a crash can: a byte
// flipped at several places of every page, the file cut short or empty, a meta page torn.
// No command may fault or panic, delete or change a package's tree or link, or go on with
// what a damaged file says: each refuses it with a *db.DamagedError, naming the file and
// the repair, or works as before (a change in a page bbolt does not read).
func TestDamagedDatabase(t *testing.T) {
	d := newDamagedDB(t)
	type damage struct {
		name string
		fn   func(b []byte) []byte
		want bool // refused
	}
	flip := func(at int) func(b []byte) []byte {
		return func(b []byte) []byte { b[at] ^= 0xa5; return b }
	}
	tear := func(page, from int) func(b []byte) []byte {
		return func(b []byte) []byte { clear(b[page*dbPage+from : (page+1)*dbPage]); return b }
	}
	newest := newestMeta(d.good)
	damages := []damage{
		{"empty", func([]byte) []byte { return nil }, true},
		{"one-page", func(b []byte) []byte { return b[:dbPage] }, true},
		{"page-and-a-half", func(b []byte) []byte { return b[:dbPage+dbPage/2] }, true},
		{"two-pages", func(b []byte) []byte { return b[:2*dbPage] }, true},
		{"last-page-cut", func(b []byte) []byte { return b[:(metaField(b, newest, metaPages)-1)*dbPage] }, true},
		{"newest-meta-torn", tear(newest, 40), true},
		{"newest-meta-checksum", flip(newest*dbPage + metaChecksum), true},
		{"both-metas-torn", func(b []byte) []byte { return tear(1, 24)(tear(0, 24)(b)) }, true},
		{"older-meta-torn", tear(1-newest, 24), false},
	}
	inUse := len(damages) // damages that reach the pages in use, not the room past them
	for page := range len(d.good) / dbPage {
		for _, off := range []int{0, 9, 17, 40, 100, 1000, dbPage - 1} {
			damages = append(damages, damage{fmt.Sprintf("page%d+%d", page, off), flip(page*dbPage + off), false})
			if page < metaField(d.good, newest, metaPages) {
				inUse++
			}
		}
	}
	refused := 0
	for _, dm := range damages {
		t.Run(dm.name, func(t *testing.T) {
			d.damage(t, dm.fn)
			if d.checkRefused(t) {
				refused++
			} else if dm.want {
				t.Errorf("damaged database not refused")
			}
		})
	}
	if refused < inUse/10 {
		t.Errorf("%d of %d damaged databases refused, %d of them in pages in use: too few for the damage to have reached them", refused, len(damages), inUse)
	}
}

// TestRepairDatabase damages the database and repairs it with verify --repair: the
// packages are recorded again as they were, their trees and links untouched, and verify
// finds nothing wrong; a reinstall and a remove then work.
func TestRepairDatabase(t *testing.T) {
	d := newDamagedDB(t)
	newest := newestMeta(d.good)
	for _, tt := range []struct {
		name string
		fn   func(b []byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"newest-meta", func(b []byte) []byte { b[newest*dbPage+metaChecksum] ^= 1; return b }},
		{"every-page-after-metas", func(b []byte) []byte {
			for p := 2; p < len(b)/dbPage; p++ {
				b[p*dbPage+9] ^= 0xff
			}
			return b
		}},
		{"last-page-cut", func(b []byte) []byte { return b[:(metaField(b, newest, metaPages)-1)*dbPage] }},
		// A mark that reads as a newer format in damaged pages is damage, not a newer pkg's.
		{"format-mark", func(b []byte) []byte {
			return bytes.ReplaceAll(b, binary.BigEndian.AppendUint64([]byte("format"), 1), binary.BigEndian.AppendUint64([]byte("format"), 2))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d.damage(t, tt.fn)
			if _, _, code := d.e.pkg("list"); code != 1 {
				t.Fatalf("list of a damaged database: exit %d, want 1", code)
			}
			out, stderr := d.e.ok("verify", "--repair")
			if !strings.Contains(out, "recorded 3 packages again") || !strings.Contains(stderr, ".pkg/db.damaged-") {
				t.Errorf("verify --repair:\n%s%s", out, stderr)
			}
			testfs.SameTree(t, "pkgs/ and bin/ after the repair", d.tree(t), d.trees)
			got := d.e.list()
			if !slices.EqualFunc(got, d.listed, func(a, b listed) bool { return a == b }) {
				t.Errorf("list after the repair: %v, want %v", got, d.listed)
			}
			d.e.ok("verify")
			d.e.ok("install", "--reinstall", "hello")
			d.e.ok("verify")
			if err := os.RemoveAll(d.path + ".damaged-1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMissingDatabase deletes a root's database, with its sum file and without: the
// packages in pkgs/ are still installed, so no command may take the root for one where
// nothing was installed, nor an install call their trees not pkg's to be moved away; each
// refuses the root as damaged, naming the file and the repair, and verify --repair records
// the packages again.
func TestMissingDatabase(t *testing.T) {
	d := newDamagedDB(t)
	for _, sum := range []bool{true, false} {
		t.Run(fmt.Sprintf("sum=%v", sum), func(t *testing.T) {
			for _, p := range []string{d.path, d.path + ".sum"} {
				if p == d.path || !sum {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !d.checkRefused(t) {
				t.Fatalf("a root whose database is missing not refused")
			}
			out, stderr := d.e.ok("verify", "--repair")
			if !strings.Contains(out, "recorded 3 packages again") {
				t.Errorf("verify --repair:\n%s%s", out, stderr)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(d.path), "db.rebuilt*")); len(left) != 0 {
				t.Errorf("the repair left %v", left)
			}
			testfs.SameTree(t, "pkgs/ and bin/ after the repair", d.tree(t), d.trees)
			if got := d.e.list(); !slices.EqualFunc(got, d.listed, func(a, b listed) bool { return a == b }) {
				t.Errorf("list after the repair: %v, want %v", got, d.listed)
			}
			d.e.ok("verify")
		})
	}
}

// TestDamagedRootElsewhere: a root's damaged database is an error of that root's alone.
// cache prune, which reads every root recorded with the cache, refuses to remove anything,
// an idle run root included, naming the root and its file, rather than fault or remove
// what that root may use; pkg run with that root (whose pins it reads) refuses it, and
// runs with another.
func TestDamagedRootElsewhere(t *testing.T) {
	bad := newDamagedDB(t)
	good := &env{t: t, root: filepath.Join(t.TempDir(), "good"), cache: bad.e.cache, repo: bad.e.repo}
	good.ok("install", "libgreet")
	bin := testfs.PkgBinary(t)
	run := func(root string) (string, int) {
		cmd := exec.Command(bin, "--root", root, "--cache", bad.e.cache, "--repo", bad.e.repo, "run", "hello")
		out, err := cmd.CombinedOutput()
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := run(good.root); code != 0 { // a run root, idle once its command exits
		t.Fatalf("pkg run with the good root: exit %d\n%s", code, out)
	}
	bad.damage(t, func(b []byte) []byte {
		for p := 2; p < len(b)/dbPage; p++ {
			b[p*dbPage+9] ^= 0xff
		}
		return b
	})
	cache := testfs.Tree(t, bad.e.cache)
	stdout, stderr, code := good.pkg("cache", "prune")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "root "+bad.e.root+" also installs from this cache") ||
		!strings.Contains(stderr, bad.path+" is damaged") || !strings.Contains(stderr, "verify --repair") {
		t.Errorf("cache prune with a damaged root among the cache's: exit %d\n%s%s", code, stdout, stderr)
	}
	testfs.SameTree(t, "cache after the prune refused", testfs.Tree(t, bad.e.cache), cache)

	if out, code := run(bad.e.root); code != 1 || !strings.Contains(out, bad.path+" is damaged") {
		t.Errorf("pkg run with the damaged root: exit %d\n%s", code, out)
	}
	if out, code := run(good.root); code != 0 {
		t.Errorf("pkg run with the good root: exit %d\n%s", code, out)
	}
	testfs.SameTree(t, "the damaged root's pkgs/ and bin/", bad.tree(t), bad.trees)
}

// TestRepairRefusesUnknownTree: a tree in pkgs/ that no cache entry matches (its entry
// pruned, or changed beyond its shape) stops the repair before it changes anything,
// naming each such tree: a database without them would leave them to no package. Once
// they are moved away, the repair records the rest, and verify finds the file added to
// hello's tree, whose shape it still has.
func TestRepairRefusesUnknownTree(t *testing.T) {
	d := newDamagedDB(t)
	stranger := filepath.Join(d.e.root, "pkgs", "stranger")
	if err := os.MkdirAll(stranger, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.e.root, "pkgs", "hello", "bin", "added"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fortunes := filepath.Join(d.e.root, "pkgs", "fortunes")
	if err := os.Remove(filepath.Join(fortunes, "share", "fortunes", "all")); err != nil {
		t.Fatal(err)
	}
	d.damage(t, func([]byte) []byte { return nil })
	out, stderr, code := d.e.pkg("verify", "--repair", "hello", "libgreet")
	if code != 1 || out != "" || !strings.Contains(stderr, "no package in the cache matches "+strconv.Quote(fortunes)+", "+strconv.Quote(stranger)+": nothing was changed") ||
		!strings.Contains(stderr, "pkg: hint: move those trees out of pkgs/") {
		t.Errorf("verify --repair: exit %d\n%s%s", code, out, stderr)
	}
	if got, err := os.ReadFile(d.path); err != nil || len(got) != 0 {
		t.Errorf("the database after the refused repair: %d bytes, %v; want it as it was, empty", len(got), err)
	}
	if kept, _ := filepath.Glob(d.path + ".damaged-*"); len(kept) != 0 {
		t.Errorf("the refused repair kept %v", kept)
	}
	aside := t.TempDir()
	for _, dir := range []string{stranger, fortunes} {
		if err := os.Rename(dir, filepath.Join(aside, filepath.Base(dir))); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code = d.e.pkg("verify", "--repair", "hello", "libgreet")
	if code != 1 || !strings.Contains(out, "recorded 2 packages again") || !strings.Contains(out, "bin/added") {
		t.Errorf("verify --repair with those trees moved away: exit %d\n%s%s", code, out, stderr)
	}
	if got := d.e.list(); len(got) != 2 || got[0].Name != "hello" || got[1].Name != "libgreet" {
		t.Errorf("list after the repair: %v", got)
	}
}

// TestNewerDatabase: a root whose database a newer pkg marked with a newer format is
// refused by every command, reads and repair included, naming the file and the formats,
// with the advice to upgrade pkg; nothing in the root is changed.
func TestNewerDatabase(t *testing.T) {
	d := newDamagedDB(t)
	testfs.MarkFormat(t, d.path, 99)
	newer, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	before := testfs.Tree(t, d.e.root)
	for _, args := range [][]string{{"list"}, {"install", "fortunes"}, {"remove", "hello"}, {"verify"}, {"verify", "--repair"}} {
		_, stderr, code := d.e.pkg(args...)
		for _, want := range []string{d.path + ": format 99, newer than this pkg reads (1)", "pkg: hint: nothing was changed; a newer pkg wrote this root's database (format 99): upgrade pkg"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("pkg %v: stderr lacks %q:\n%s", args, want, stderr)
			}
		}
		if code != 1 {
			t.Errorf("pkg %v: exit %d, want 1", args, code)
		}
	}
	testfs.SameTree(t, "the root after the commands", testfs.Tree(t, d.e.root), before)
	if got, err := os.ReadFile(d.path); err != nil || !bytes.Equal(got, newer) {
		t.Errorf("the database after the commands: %v, changed %v", err, !bytes.Equal(got, newer))
	}
}
