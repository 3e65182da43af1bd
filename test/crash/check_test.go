package crash

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/tarutil"
)

// state is what is installed: key (Record.Key: the name, or NAME@VERSION for an npm
// instance) → version.
type state map[string]string

func (s state) String() string {
	var parts []string
	for n, v := range s {
		parts = append(parts, n+"="+v)
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, " ") + "}"
}

// checkRoot opens root's database, which must be free, and returns what it records and
// every way root breaks the commit protocol's invariants, as the published packages and
// install's Verify see them: the database records package P
// at version V if and only if pkgs/P holds exactly V's files (path, type, mode, size,
// content), with V's file list recorded; no intent, staging or trash is left, nor a done
// marker but a roll-forward's and the one a cut left after another's finish; bin/ holds
// exactly the declared links; the prefix holds exactly the recorded packages' files, no
// roll-forward pending; every installed package's dependencies are installed; and bbolt's
// consistency check passes.
func checkRoot(root string, w world) (state, []string) {
	st, problems := checkRecords(root, w)
	if len(problems) > 0 {
		return st, problems // Open would reconcile what is wrong
	}
	r, err := install.Open(context.Background(), root, install.Options{LockTimeout: 10 * time.Second})
	if err != nil {
		return st, []string{err.Error()}
	}
	defer r.Close()
	vp, err := r.Verify()
	if err != nil {
		return st, []string{"verify: " + err.Error()}
	}
	for _, p := range vp {
		problems = append(problems, "verify: "+p.Error())
	}
	return st, problems
}

// checkRecords checks root with its database and the published packages, without the
// install package.
func checkRecords(root string, w world) (state, []string) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	d, err := db.Open(filepath.Join(root, ".pkg", "db"), db.Options{Timeout: 10 * time.Second})
	if err != nil {
		return nil, []string{err.Error()}
	}
	if err := lockFree(root); err != nil {
		bad("%v", err)
	}
	if err := d.Check(); err != nil {
		bad("bbolt check: %v", err)
	}
	if ins, err := d.Intents(); err != nil || len(ins) > 0 {
		bad("intents left: %+v (%v)", ins, err)
	}
	ps, err := d.List()
	if err != nil {
		return nil, append(problems, err.Error())
	}
	requested, err := d.Requested()
	if err != nil {
		return nil, append(problems, err.Error())
	}
	st := state{}
	trees := map[string]bool{} // pkgs/ entries
	wantBins := map[string]string{}
	for _, p := range ps {
		trees[repo.FileName(p.Key())] = true
		st[p.Key()] = p.Version
		s := w[p.Name][p.Version]
		if s == nil {
			bad("%s %s recorded, never published", p.Name, p.Version)
			continue
		}
		if p.SHA256 != s.sha {
			bad("%s %s recorded with sha256 %s, published %s", p.Name, p.Version, p.SHA256, s.sha)
		}
		files, err := d.Files(p.Key())
		if err != nil {
			bad("files of %s: %v", p.Name, err)
		} else if why := diffFiles(files, s.records()); why != "" {
			bad("%s %s: recorded files differ from the published ones: %s", p.Name, p.Version, why)
		}
		problems = append(problems, checkTree(root, p, s)...)
		if _, asked := requested[p.Key()]; p.Kind == repo.KindNPM && !asked {
			continue // npm links the commands of the packages asked for alone
		}
		for _, b := range s.bin {
			if at := prefixPath(p, b); at != "bin/"+cmdName(b) { // else the package's own file is the command
				wantBins[cmdName(b)] = "../" + at
			}
		}
	}
	if p, done, err := d.Prefix(); err != nil || p != nil && !done {
		bad("prefix roll-forward left: %+v (%v)", p, err)
	}
	if markers, _ := filepath.Glob(filepath.Join(root, ".pkg", "db.done-*")); len(markers) > 2 {
		bad("done markers left: %v", markers)
	}
	problems = append(problems, checkPrefix(root, ps, w, npmLinks(ps, requested))...)
	for _, p := range ps {
		for _, req := range p.Depends {
			if !slices.ContainsFunc(ps, func(q db.Record) bool { return q.Name == req.Name && req.Allows(q.Version) }) {
				bad("%s %s needs %s: not installed", p.Name, p.Version, req)
			}
		}
	}
	for _, e := range readDir(root, "pkgs", bad) {
		if !trees[e] {
			bad("pkgs/%s exists, not recorded", e)
		}
	}
	for _, dir := range []string{".pkg/staging", ".pkg/trash"} {
		if left := readDir(root, dir, bad); len(left) > 0 {
			bad("%s not empty: %v", dir, left)
		}
	}
	for _, e := range readDir(root, "bin", bad) {
		if slices.ContainsFunc(ps, func(p db.Record) bool { return slices.Contains(w[p.Name][p.Version].bin, "bin/"+e) }) {
			continue // a package's file: checkPrefix's
		}
		target, err := os.Readlink(filepath.Join(root, "bin", e))
		if err != nil || target != wantBins[e] {
			bad("bin/%s -> %q, want %q", e, target, wantBins[e])
		}
		delete(wantBins, e)
	}
	for cmd := range wantBins {
		bad("bin/%s missing", cmd)
	}
	return st, problems
}

// inFold reports whether the member name is beneath one of folded.
func inFold(folded []string, name string) bool {
	return slices.ContainsFunc(folded, func(f string) bool { return strings.HasPrefix(name, f+"/") })
}

// prefixPath returns where the member m of the package p is in the prefix: m, or, for an
// npm instance, m in its place in the node_modules layout.
func prefixPath(p db.Record, m string) string {
	if p.Kind != repo.KindNPM {
		return m
	}
	_, rest, _ := strings.Cut(m, "/")
	return strings.TrimSuffix(npmInto(p.Name, p.Version)+"/"+rest, "/")
}

// checkPrefix checks that the root's prefix holds exactly the members of the packages ps
// records (none of the crash worlds' packages replaces another's) and the links of the
// node_modules layout: each directory as a directory, anything else as the inode of the
// package's member in pkgs/, each link with its target; nothing else but pkg's own .pkg,
// pkgs and bin/.
func checkPrefix(root string, ps []db.Record, w world, links map[string]string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	want := map[string]string{} // prefix path → its package; "" for a directory
	for _, p := range ps {
		s := w[p.Name][p.Version]
		if s == nil {
			continue
		}
		for _, m := range s.members {
			at := prefixPath(p, m.name)
			for d := filepath.Dir(at); d != "."; d = filepath.Dir(d) {
				want[d] = ""
			}
			if m.typ == tar.TypeDir {
				want[at] = ""
				continue
			}
			want[at] = p.Name
			var got, pkg unix.Stat_t
			if err := unix.Lstat(filepath.Join(root, at), &got); err != nil {
				bad("prefix: %s of %s %s: %v", at, p.Name, p.Version, err)
			} else if unix.Lstat(filepath.Join(root, "pkgs", repo.FileName(p.Key()), m.name), &pkg) == nil && got.Ino != pkg.Ino && !inFold(p.Folded, m.name) {
				bad("prefix: %s is not %s %s's file", at, p.Name, p.Version)
			}
		}
	}
	for at, target := range links {
		want[at] = "link"
		for d := filepath.Dir(at); d != "."; d = filepath.Dir(d) { // .pnpm/node_modules/@sc holds links alone
			want[d] = ""
		}
		if got, err := os.Readlink(filepath.Join(root, at)); err != nil || got != target {
			bad("prefix: %s links to %q (%v), want %q", at, got, err, target)
		}
	}
	err := filepath.WalkDir(root, func(full string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, full)
		switch {
		case rel == ".pkg" || rel == "pkgs":
			return filepath.SkipDir
		case rel == "." || rel == "bin":
			return nil
		}
		owner, ok := want[rel]
		switch {
		case !ok && !strings.HasPrefix(rel, "bin/"):
			bad("prefix: %s is in the root, in no package recorded", rel)
		case ok && owner == "" && !e.IsDir():
			bad("prefix: %s is not a directory", rel)
		}
		return nil
	})
	if err != nil {
		bad("prefix: %v", err)
	}
	return problems
}

// diffFiles describes the first difference between two sorted file lists, or returns "".
func diffFiles(got, want []db.File) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("recorded %+v, published %+v", got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d recorded, %d published", len(got), len(want))
	}
	return ""
}

func readDir(root, dir string, bad func(string, ...any)) []string {
	ents, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		bad("%v", err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// checkTree compares the tree at dir with the members of s.
func checkTree(root string, rec db.Record, s *spec) []string {
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s %s: ", s.name, s.version)+fmt.Sprintf(format, args...))
	}
	dir, folded := filepath.Join(root, "pkgs", repo.FileName(rec.Key())), rec.Folded
	// at is where the member rel is: beneath a folded directory, in the prefix.
	at := func(rel string) string {
		for _, f := range folded {
			if rel == f || strings.HasPrefix(rel, f+"/") {
				return filepath.Join(root, prefixPath(rec, rel))
			}
		}
		return filepath.Join(dir, rel)
	}
	want := map[string]*member{}
	for i := range s.members {
		want[s.members[i].name] = &s.members[i]
	}
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
		bad("%s is not a directory: %v", dir, err)
		return problems
	}
	seen := 0
	var visit func(top, base string) fs.WalkDirFunc // base: the member at top, "" for the tree
	visit = func(top, base string) fs.WalkDirFunc {
		return func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == top && base == "" {
				return err
			}
			rel, _ := filepath.Rel(top, p)
			if base != "" {
				rel = strings.TrimSuffix(base+"/"+rel, "/.")
			}
			m := want[rel]
			if m == nil {
				bad("unexpected %s", rel)
				return nil
			}
			if top == dir && slices.Contains(folded, rel) {
				if es, err := os.ReadDir(p); err != nil || len(es) > 0 {
					bad("placeholder %s of a folded directory: %d entries, %v", rel, len(es), err)
				}
				if err := filepath.WalkDir(at(rel), visit(at(rel), rel)); err != nil {
					bad("walk %s: %v", rel, err)
				}
				return filepath.SkipDir
			}
			seen++
			info, err := d.Info()
			if err != nil {
				return err
			}
			if why := differs(at, p, info, m); why != "" {
				bad("%s: %s", rel, why)
			}
			return nil
		}
	}
	if err := filepath.WalkDir(dir, visit(dir, "")); err != nil {
		bad("walk: %v", err)
	}
	if seen != len(want) {
		bad("%d of %d members present", seen, len(want))
	}
	return problems
}

// differs says how the file at p, described by info, differs from m, or returns "".
func differs(at func(rel string) string, p string, info fs.FileInfo, m *member) string {
	switch m.typ {
	case tar.TypeDir:
		if !info.IsDir() || info.Mode().Perm() != m.mode {
			return fmt.Sprintf("%v, want directory %v", info.Mode(), m.mode)
		}
	case tar.TypeSymlink:
		if target, err := os.Readlink(p); err != nil || target != m.link {
			return fmt.Sprintf("symlink to %q (%v), want %q", target, err, m.link)
		}
	case tar.TypeLink:
		target, err := os.Lstat(at(m.link))
		if err != nil || !os.SameFile(info, target) {
			return fmt.Sprintf("not a hardlink of %s (%v)", m.link, err)
		}
	case tar.TypeReg:
		if !info.Mode().IsRegular() || info.Mode().Perm() != m.mode || info.Size() != int64(len(m.data)) {
			return fmt.Sprintf("%v %d bytes, want %v %d bytes", info.Mode(), info.Size(), m.mode, len(m.data))
		}
		sum, err := fileSHA(p)
		if err != nil || sum != sha256.Sum256(m.data) {
			return fmt.Sprintf("content differs (%v)", err)
		}
	}
	return ""
}

func fileSHA(p string) ([32]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	return [32]byte(h.Sum(nil)), err
}

// checkCache verifies every entry of the cache at dir: the tar and its index are both
// there, the index matches the tar, every regular member's data has its recorded digest,
// the entry's members are those of the archive it is named after, and no temporary file
// is left.
func checkCache(dir string, w world) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	bySHA := map[string]*spec{}
	for _, vs := range w {
		for _, s := range vs {
			bySHA[s.sha] = s
		}
	}
	c, err := fetch.OpenCache(context.Background(), dir)
	if err != nil {
		return []string{err.Error()}
	}
	defer c.Close()
	entries, err := c.List()
	if err != nil {
		return []string{err.Error()}
	}
	for _, e := range entries {
		s := bySHA[e.SHA256]
		if s == nil || e.Name != s.name || e.Version != s.version {
			bad("cache entry %s (%s %s) was never published", e.SHA256, e.Name, e.Version)
			continue
		}
		ms, err := c.Members(e.SHA256)
		if err != nil {
			bad("cache entry %s %s: %v", s.name, s.version, err)
			continue
		}
		tarFile, err := os.Open(c.Path(e.SHA256))
		if err != nil {
			bad("%v", err)
			continue
		}
		want := s.records()
		if len(ms) != len(want) {
			bad("cache entry %s %s: %d members, want %d", s.name, s.version, len(ms), len(want))
		}
		if info, err := tarFile.Stat(); err != nil {
			bad("%v", err)
		} else if err := tarutil.SpotCheck(tarFile, info.Size(), ms, math.MaxInt64); err != nil {
			bad("cache entry %s %s: %v", s.name, s.version, err) // every member's data hashed
		}
		for _, m := range ms {
			if m.Type != tar.TypeReg {
				continue
			}
			i, found := slices.BinarySearchFunc(want, m.Name, func(f db.File, name string) int { return strings.Compare(f.Path, name) })
			if !found || want[i].SHA256 != m.SHA256 {
				bad("cache entry %s %s: member %s is not the published one", s.name, s.version, m.Name)
			}
		}
		for _, p := range checkTails(tarFile, strings.TrimSuffix(c.Path(e.SHA256), ".tar")+".tails", ms) {
			bad("cache entry %s %s: %s", s.name, s.version, p)
		}
		tarFile.Close()
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) > 0 {
		bad("cache tmp/ not empty: %d files", len(left))
	}
	return problems
}

// checkTails returns what differs between the tail files in dir, which an install clones
// in the place of the tar's last blocks, and the tar's bytes they stand for: each is
// named by the offset of a member's tail and holds it exactly. An entry without tails has
// no dir.
func checkTails(tarFile *os.File, dir string, ms []tarutil.Member) []string {
	names, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return []string{err.Error()}
	}
	tails := map[string]int64{} // the name of each member's tail file: its length
	for i := range ms {
		if off, n := ms[i].Tail(); n > 0 {
			tails[strconv.FormatInt(off, 10)] = n
		}
	}
	var problems []string
	for _, ent := range names {
		n, ok := tails[ent.Name()]
		got, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		off, _ := strconv.ParseInt(ent.Name(), 10, 64)
		want := make([]byte, n)
		if ok && err == nil {
			_, err = tarFile.ReadAt(want, off)
		}
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("tail file %s begins no member's tail", ent.Name()))
		case err != nil:
			problems = append(problems, err.Error())
		case !bytes.Equal(got, want):
			problems = append(problems, fmt.Sprintf("tail file %s (%d bytes) is not the tar's %d bytes at %d", ent.Name(), len(got), n, off))
		}
	}
	return problems
}

// lockFree checks that no process holds the root's lock.
func lockFree(root string) error {
	f, err := os.Open(filepath.Join(root, ".pkg", "lock"))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("the root's lock is held: %v", err)
	}
	return nil
}
