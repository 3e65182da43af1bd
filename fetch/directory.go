package fetch

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"pkg/internal/regfile"
	"pkg/repo"
	"pkg/trust"
)

// directory is a repository in a local directory: its files are read in place, nothing
// is retried, and an archive is read from any offset.
type directory struct {
	dir   string       // absolute
	found func() error // checkRepository's answer, found once: a lockfile relocates each of its packages
}

var _ transport = directory{}

// newDirectory returns the repository in dir, or in the directory of dir if it names
// index.json.
func newDirectory(dir string) (transport, error) {
	if filepath.Base(dir) == "index.json" {
		dir = filepath.Dir(dir)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d := directory{dir: dir}
	d.found = sync.OnceValue(d.check)
	return d, nil
}

func (d directory) url() string { return fileURL(d.dir + string(filepath.Separator)) }

func (d directory) indexLocation() string { return filepath.Join(d.dir, "index.json") }

func (d directory) archiveURL(rel string) string {
	return fileURL(filepath.Join(d.dir, filepath.FromSlash(rel)))
}

func (d directory) remote() bool { return false }

func (d directory) checkRepository() error { return d.found() }

// check refuses the directory unless it holds index.json.
func (d directory) check() error {
	f, err := regfile.Open(d.indexLocation(), 0)
	if err != nil {
		return d.noIndex(err)
	}
	return f.Close()
}

// noIndex is ErrNoRepository where err, opening index.json, says it does not exist.
func (d directory) noIndex(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &noRepository{d.dir, d.indexLocation() + " does not exist"}
	}
	return err
}

func (d directory) readIndex(_ context.Context, _ *savedIndex, _ int) (*savedIndex, string, error) {
	where := d.indexLocation()
	f, err := regfile.Open(where, 0)
	if err != nil {
		return nil, where, d.noIndex(err)
	}
	defer f.Close()
	fresh := &savedIndex{Location: where}
	if fresh.data, err = readLimited(f, repo.MaxIndexSize, where, "index.json"); err != nil {
		return nil, where, err
	}
	return fresh, where, nil
}

// signatureLocation is the path of index.json.sig.
func (d directory) signatureLocation() string { return filepath.Join(d.dir, repo.SignatureName) }

func (d directory) readSignature(context.Context, int) ([]byte, error) {
	path := d.signatureLocation()
	f, err := regfile.Open(path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, trust.MaxSignatureSize, path, repo.SignatureName)
}

// open opens the archive, to be read until ctx is done. Anything but a regular file is
// refused: a FIFO would block the open, a directory fail later.
func (d directory) open(ctx context.Context, rel, _ string, _, off int64, _ bool, _ int) (body, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, &outsideError{rel, d.dir}
	}
	f, err := regfile.Open(filepath.Join(d.dir, filepath.FromSlash(rel)), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gone{err}
	} else if err != nil {
		return nil, err
	}
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &localArchive{f, ctx, off}, nil
}

// localArchive is a local archive whose reads fail once ctx is done, as a download's do.
type localArchive struct {
	f   *os.File
	ctx context.Context
	off int64 // where it was opened
}

var _ body = (*localArchive)(nil)

func (a *localArchive) start() int64 { return a.off }

func (a *localArchive) from() string { return a.f.Name() }

func (a *localArchive) Read(p []byte) (int, error) {
	if err := a.ctx.Err(); err != nil {
		return 0, err
	}
	return a.f.Read(p)
}

// ReadAt is f's, failing once ctx is done: a zip is read in place by it (inflateZip).
func (a *localArchive) ReadAt(p []byte, off int64) (int, error) {
	if err := a.ctx.Err(); err != nil {
		return 0, err
	}
	return a.f.ReadAt(p, off)
}

func (a *localArchive) Close() error { return a.f.Close() }
