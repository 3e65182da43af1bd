package repo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"pkg/internal/durable"
)

// AddAll is Add of several archives in one change of dir's index: archives[i] is copied
// in as pkgs[i] (named by the ending of pkgs[i].Archive where it has one, as a file of
// npm's cache has none), or, where pkgs[i].Archive is an http(s) URL, recorded at that URL,
// archives[i] being its download (AddURL); every archive is placed, and then the index is written once,
// after which the archives of the entries replaced that no entry names are deleted. On any
// error before, the archives it placed are removed again, so the directory is as it was. When
// the index has every entry already, with the same bytes (a second run), it writes
// nothing (unchanged). Unless replace, it refuses, as Add does, a version the index has with another
// archive or other metadata (*RepublishError, unwrapped), before it places any archive.
func AddAll(ctx context.Context, dir string, archives []string, pkgs []Package, replace bool, s *Signer) (*AddedAll, error) {
	if len(archives) != len(pkgs) {
		panic("repo: AddAll: an archive for each package")
	}
	res, err := addAll(ctx, dir, archives, pkgs, replace, s)
	if re := (*RepublishError)(nil); errors.As(err, &re) {
		return nil, re
	}
	if err != nil {
		return nil, fmt.Errorf("add to %s: %w", dir, err)
	}
	return res, nil
}

// AddedAll is what AddAll did.
type AddedAll struct {
	Packages []Package   // the entries as the index holds them, in the order given
	Meta     Meta        // the index's, as written (as it was, where nothing was written)
	Index    []Package   // the index's entries, as written
	Written  bool        // index.json was written, and signed given a signer: not where it was unchanged
	New      []Package   // those of Packages the index did not have with that archive
	Replaced [][]Package // for each of Packages, the entry whose place it took, if any (itself, added again, included)
	Created  bool        // dir had no index.json
	Dropped              // the archives of the entries replaced, where no entry names them now
}

func addAll(ctx context.Context, dir string, archives []string, pkgs []Package, replace bool, s *Signer) (*AddedAll, error) {
	out, exts := make([]Package, len(pkgs)), make([]string, len(pkgs))
	for i, p := range pkgs {
		exts[i] = archiveExt(cmp.Or(p.Archive, archives[i]))
		remote := ""
		if IsURL(p.Archive) {
			remote = p.Archive
		}
		p, err := prepare(cmp.Or(p.Archive, archives[i]), remote, p)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out[:i], p.SameKey) {
			return nil, fmt.Errorf("package %s: given twice", p.id())
		}
		out[i] = p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ix, created, err := readIndex(filepath.Join(dir, indexName))
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(out) && !replace; i++ {
		if err := checkRepublish(dir, archives[i], ix, out[i]); err != nil {
			return nil, err
		}
	}
	had, meta := slices.Clone(ix.Packages), ix.Meta
	if err := stamp(dir, ix, s); err != nil { // refuses a signed directory before anything is copied
		return nil, err
	}
	placed, replaced, err := placeAll(dir, archives, exts, out, ix)
	res := &AddedAll{Packages: out, Meta: meta, Index: ix.Packages, Replaced: replaced, Created: created, New: newEntries(out, had)}
	if err == nil && unchanged(dir, had, meta, ix, s) {
		return res, nil
	}
	if err == nil {
		err = writeIndex(dir, ix, s)
	}
	if ue := (*UnsignedError)(nil); err != nil && !errors.As(err, &ue) { // an unsigned index names the archives
		removePlaced(dir, placed)
	}
	if err != nil {
		return nil, err
	}
	res.Meta, res.Index, res.Written, res.Dropped = ix.Meta, ix.Packages, true, dropArchives(dir, slices.Concat(replaced...), ix.Packages)
	return res, nil
}

// newEntries returns those of pkgs that had has no entry of with the same sha256.
func newEntries(pkgs, had []Package) []Package {
	var fresh []Package
	for _, p := range pkgs {
		if !slices.ContainsFunc(had, func(q Package) bool { return p.SameKey(q) && p.SHA256 == q.SHA256 }) {
			fresh = append(fresh, p)
		}
	}
	return fresh
}

// placeAll copies archives[i] into dir for pkgs[i], its name ending in exts[i], as place
// does, setting each one's Archive, Size and SHA256, or, for an entry of an http(s) URL,
// hashes the download archives[i]; and puts each in ix. It returns the names of the files
// it created, those it made before an error included, and, for each of pkgs, the entries
// of ix it replaced.
func placeAll(dir string, archives, exts []string, pkgs []Package, ix *Index) (placed []string, replaced [][]Package, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	existed := make(map[string]bool, len(entries))
	for _, e := range entries {
		existed[e.Name()] = true
	}
	for i := range pkgs {
		p := &pkgs[i]
		name := p.Archive
		if IsURL(p.Archive) {
			p.Size, p.SHA256, err = HashFile(archives[i])
		} else {
			name, p.Size, p.SHA256, err = archiveFor(dir, archives[i], exts[i], *p, ix)
		}
		if err == nil && !IsURL(name) && !existed[name] {
			existed[name], placed = true, append(placed, name)
		}
		if err == nil {
			p.Archive = name
			err = checkNumbers(p)
		}
		if err != nil {
			return placed, replaced, fmt.Errorf("package %s: %w", p.id(), err)
		}
		replaced = append(replaced, ix.put(*p))
	}
	return placed, replaced, nil
}

// removePlaced removes the archives named placed from dir, after a failed AddAll.
func removePlaced(dir string, placed []string) {
	for _, name := range placed {
		os.Remove(filepath.Join(dir, name))
	}
	if len(placed) > 0 {
		durable.Path(dir)
	}
}
