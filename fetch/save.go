package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"pkg/internal/durable"
	"pkg/repo"
)

// A mirror directory (pkg mirror) is what any web server serves as it is:
//
//	<dir>/<repository>/index.json      a repository's index, byte for byte as published
//	<dir>/<repository>/index.json.sig  its signature, if it has one
//	<dir>/sha256/<hex>                 each archive as published, named by its sha256
//
// Every file appears by rename once complete (and, for an archive, verified), mode 0644.
// A temporary file is named .pkg-tmp-*; one older than tmpAge was left by a process that
// died, and the next SaveArchive or SaveIndex into that directory removes it.
const tmpAge = time.Hour

// SaveIndex writes the index of s that the cache keeps, the one VerifiedIndex accepted
// last, and its signature, as published, to dir/index.json and dir/index.json.sig; a
// signature file left from an earlier index is removed. A repository whose index the
// cache lacks fails with ErrOffline.
func (c *Cache) SaveIndex(s *Source, dir string) error {
	saved, err := loadIndex(c.index, indexName(s.indexLocation()))
	if errors.Is(err, fs.ErrNotExist) {
		return &offlineError{"no copy of the index of " + s.URL() + " in the cache"}
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := saveFile(dir, "index.json", func(w io.Writer) error { _, err := w.Write(saved.data); return err }); err != nil {
		return err
	}
	if saved.Signature == nil {
		if err := os.Remove(filepath.Join(dir, repo.SignatureName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return saveFile(dir, repo.SignatureName, func(w io.Writer) error { _, err := w.Write(saved.Signature); return err })
}

// SaveArchive writes p's archive as published, from the first of s's locations to serve
// it whose bytes are not refused (openArchive, refused.go), to dir/sha256/<hex of its
// sha256>, once it has checked its size and sha256 against p (the bytes downloaded going
// through progress, if not nil), and reports whether it wrote it: one already there with
// the right size and sha256 is kept, any other replaced. An offline source writes none
// (ErrOffline): the cache keeps archives converted, not as published.
func (s *Source) SaveArchive(ctx context.Context, p repo.Package, dir string, progress io.Writer) (wrote bool, err error) {
	defer func() { err = s.denied(err) }()
	sub := filepath.Join(dir, "sha256")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return false, err
	}
	if ok, err := hasArchive(filepath.Join(sub, p.SHA256), p); ok || err != nil {
		return false, err
	}
	if s.offline {
		return false, &packageError{name: p.Name, version: p.Version, err: &offlineError{"the cache keeps no archive as published"}}
	}
	err = s.refusing(ctx, func(r *refusals) error {
		b, err := s.openArchive(ctx, nil, p, 0, r)
		if err != nil {
			return &packageError{name: p.Name, version: p.Version, err: err}
		}
		defer b.Close()
		err = saveFile(sub, p.SHA256, func(w io.Writer) error {
			_, err := io.Copy(w, newVerifier(b, p, progress))
			return err
		})
		if se := (*SizeError)(nil); errors.As(err, &se) {
			return se // the same from every location
		} else if err != nil {
			return &packageError{name: p.Name, version: p.Version, from: b.from(), err: err}
		}
		return nil
	})
	return err == nil, err
}

// hasArchive reports whether the file name is p's archive; one that is not (cut short or
// changed by hand) is replaced.
func hasArchive(name string, p repo.Package) (bool, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, p.Size+1))
	switch {
	case err != nil:
		return false, err
	}
	return n == p.Size && hex.EncodeToString(h.Sum(nil)) == p.SHA256, nil
}

// saveFile writes dir/name by fill, atomically and durably, readable by all as a web
// server's file (durable.WriteFile), after removing the stale temporary files of dir.
func saveFile(dir, name string, fill func(io.Writer) error) error {
	removeStale(dir)
	return durable.WriteFile(dir, name, ".pkg-tmp-*", fill)
}

// cleaned are the directories removeStale has cleaned in this process.
var cleaned sync.Map

// removeStale removes the temporary files in dir older than tmpAge, once per process.
func removeStale(dir string) {
	if _, done := cleaned.LoadOrStore(dir, true); done {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".pkg-tmp-") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > tmpAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
