package install

import (
	"archive/tar"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/repo"
	"pkg/tarutil"
)

// Result describes one install.
type Result struct {
	Name, Version string
	Previous      string // version replaced by this install, "" if none
	Files         int    // members that are not directories
	Bytes         int64  // bytes of regular files
	Cloned        int64  // bytes shared with the cache
	Copied        int64  // bytes written
	Method        Method // how bulk data moved; "" when no file needed a bulk transfer
	Fallback      error  // why the method is not Clone, when it is not
	Elapsed       time.Duration
}

// Install installs p from the aligned tar at tarPath, replacing any installed version of it.
// On error the root and the database are as they were.
func (r *Root) Install(tarPath string, p repo.Package) (*Result, error) {
	start := time.Now()
	res, err := r.install(tarPath, p)
	if err != nil {
		return nil, fmt.Errorf("install %s %s: %w", p.Name, p.Version, err)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func (r *Root) install(tarPath string, p repo.Package) (*Result, error) {
	src, err := os.Open(tarPath)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	members, err := tarutil.Scan(src)
	if err != nil {
		return nil, err
	}
	res := summarize(p, members)
	if err := r.check(p, res, members); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(r.path(".pkg", "staging"), p.Name+".")
	if err != nil {
		return nil, err
	}
	defer removeTree(staging) // the new tree after a failure, the old one after an upgrade
	s, err := newStager(src, staging, r.umask)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.stage(members); err != nil {
		return nil, err
	}
	res.Cloned, res.Copied, res.Method, res.Fallback = s.cloned.Load(), s.copied.Load(), s.method, s.fallback
	if old, err := r.db.Get(p.Name); err == nil {
		res.Previous = old.Version
	}
	rec := &db.Package{Name: p.Name, Version: p.Version, SHA256: p.SHA256, Depends: p.Depends, Bin: p.Bin,
		Summary: p.Summary, Installed: time.Now().UTC(), Files: res.Files, Size: res.Bytes}
	return res, r.commit(staging, rec, records(members))
}

func summarize(p repo.Package, members []tarutil.Member) *Result {
	res := &Result{Name: p.Name, Version: p.Version}
	for _, m := range members {
		if m.Type != tar.TypeDir {
			res.Files++
		}
		res.Bytes += m.Size
	}
	return res
}

// check refuses a package whose contents disagree with its index entry, or whose commands
// are missing or taken by another package.
func (r *Root) check(p repo.Package, res *Result, members []tarutil.Member) error {
	if p.Files != 0 && p.Files != res.Files {
		return fmt.Errorf("archive has %d files, index says %d", res.Files, p.Files)
	}
	if p.InstalledSize != 0 && p.InstalledSize != res.Bytes {
		return fmt.Errorf("archive has %d bytes of files, index says installed_size %d", res.Bytes, p.InstalledSize)
	}
	types := make(map[string]byte, len(members))
	for _, m := range members {
		types[m.Name] = m.Type
	}
	for _, b := range p.Bin {
		if t := types[path.Clean(b)]; t != tar.TypeReg && t != tar.TypeLink && t != tar.TypeSymlink {
			return fmt.Errorf("bin %q is not a file in the package", b)
		}
	}
	return r.checkBins(p)
}

// commit makes the staged tree durable, swaps it into place and records it. The intent is
// written before the rename and deleted with the record, so a crash in between is undone at
// the next start (see reconcile).
func (r *Root) commit(staging string, rec *db.Package, files []db.File) error {
	if err := r.syncfs(staging); err != nil {
		return err
	}
	ino, _ := inode(staging)
	rel, _ := filepath.Rel(r.dir, staging)
	if err := r.db.SetIntent(db.Intent{Op: "install", Name: rec.Name, Staging: rel, Inode: ino}); err != nil {
		return err
	}
	if err := r.swapIn(staging, r.pkgDir(rec.Name)); err != nil {
		return errors.Join(err, r.db.ClearIntent(rec.Name))
	}
	if err := r.syncDir(r.path("pkgs")); err != nil {
		return errors.Join(err, r.undo(db.Intent{Op: "install", Name: rec.Name, Staging: rel, Inode: ino}))
	}
	if err := r.db.Commit(rec, files); err != nil {
		return errors.Join(err, r.undo(db.Intent{Op: "install", Name: rec.Name, Staging: rel, Inode: ino}))
	}
	return r.syncBins()
}

// swapIn renames the staged tree to dst, exchanging it with the tree already there.
func (r *Root) swapIn(staging, dst string) error {
	if _, ok := inode(dst); ok {
		return exchange(staging, dst)
	}
	return os.Rename(staging, dst)
}

// syncfs makes everything written to the root's filesystem durable, once per install.
func (r *Root) syncfs(dir string) error {
	if r.o.NoSync {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return &os.PathError{Op: "syncfs", Path: dir, Err: err}
	}
	return nil
}
