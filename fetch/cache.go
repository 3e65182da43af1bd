package fetch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"pkg/repo"
	"pkg/tarutil"
)

// streamBufSize is the buffer between the raw archive stream and the decompressor.
const streamBufSize = 64 << 10

// Cache is a directory of aligned tars, each named by the sha256 of the archive it came from.
type Cache struct {
	dir string
}

// OpenCache creates the cache's layout under dir if needed.
func OpenCache(dir string) (*Cache, error) {
	for _, d := range []string{"tars", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("fetch: create cache: %w", err)
		}
	}
	return &Cache{dir: dir}, nil
}

// Path returns where the aligned tar of the archive with this sha256 is kept.
func (c *Cache) Path(sha string) string { return filepath.Join(c.dir, "tars", sha+".tar") }

// Has reports whether the archive with this sha256 is in the cache.
func (c *Cache) Has(sha string) bool {
	_, err := os.Stat(c.Path(sha))
	return err == nil
}

// Fetch makes sure the aligned tar of p is in the cache, downloading and converting it if
// needed, and returns its path. The entry appears only once its size and sha256 match p.
// The archive's bytes are also written to progress, when it is not nil, as they arrive.
func (c *Cache) Fetch(ctx context.Context, s *Source, p repo.Package, progress io.Writer) (string, error) {
	dst := c.Path(p.SHA256)
	if c.Has(p.SHA256) {
		return dst, nil
	}
	body, where, err := s.open(ctx, p.Archive)
	if err != nil {
		return "", fmt.Errorf("fetch %s %s: %w", p.Name, p.Version, err)
	}
	defer body.Close()
	if progress != nil {
		body = io.NopCloser(io.TeeReader(body, progress))
	}
	if err := c.store(dst, body, p); err != nil {
		return "", fmt.Errorf("fetch %s %s from %s: %w", p.Name, p.Version, where, err)
	}
	return dst, nil
}

// store converts body into a temporary file and renames it to dst once verified.
func (c *Cache) store(dst string, body io.Reader, p repo.Package) (err error) {
	tmp, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), p.Name+"-*.tar")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := convert(tmp, body, p); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// verifier counts and hashes the raw archive bytes as they are read.
type verifier struct {
	r io.Reader
	n int64
	h hash.Hash
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.n += int64(n)
	v.h.Write(p[:n])
	return n, err
}

// check compares what was read with the index entry.
func (v *verifier) check(p repo.Package) error {
	if v.n != p.Size {
		if v.n > p.Size {
			return fmt.Errorf("archive is larger than the %d bytes the index declares", p.Size)
		}
		return fmt.Errorf("archive is %d bytes, index declares %d", v.n, p.Size)
	}
	if got := hex.EncodeToString(v.h.Sum(nil)); got != p.SHA256 {
		return fmt.Errorf("sha256 mismatch: archive has %s, index declares %s", got, p.SHA256)
	}
	return nil
}

// convert streams an archive through the size limit and sha256, decompresses it and writes
// its aligned form to w. A size or digest mismatch is reported before any conversion error,
// since it is the cause of most of them.
func convert(w io.Writer, body io.Reader, p repo.Package) error {
	v := &verifier{r: io.LimitReader(body, p.Size+1), h: sha256.New()}
	br := bufio.NewReaderSize(v, streamBufSize)
	_, err := align(w, br)
	if _, derr := io.Copy(io.Discard, br); err == nil {
		err = derr
	}
	if verr := v.check(p); verr != nil {
		return verr
	}
	return err
}

// align decompresses br and writes the aligned tar to w, reading the compressed stream to its
// end so that trailers are checked.
func align(w io.Writer, br *bufio.Reader) (tarutil.Stats, error) {
	tr, err := decompress(br)
	if err != nil {
		return tarutil.Stats{}, err
	}
	defer tr.Close()
	st, err := tarutil.Align(w, tr)
	if err != nil {
		return st, err
	}
	if _, err := io.Copy(io.Discard, tr); err != nil {
		return st, fmt.Errorf("after the tar: %w", err)
	}
	return st, nil
}

// Inspect reads a local archive the way Fetch would and returns what it holds, refusing
// anything an install would refuse.
func Inspect(path string) (tarutil.Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return tarutil.Stats{}, err
	}
	defer f.Close()
	st, err := align(io.Discard, bufio.NewReaderSize(f, streamBufSize))
	if err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, errors.Unwrap(err))
	}
	return nil
}
