package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
	"pkg/internal/regfile"
	"pkg/repo"
	"pkg/trust"
)

// savedIndex is the last verified index of a repository, kept in the cache as a line of
// JSON with what a conditional request needs and the index's signature, followed by the
// index as published.
type savedIndex struct {
	Location     string `json:"location"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	Signature    []byte `json:"signature,omitempty"` // index.json.sig as published, if any
	// The ids of the trusted keys that verified this copy, if any: the cache then refuses
	// an index of the repository that no trusted key verifies.
	VerifiedBy []string `json:"verified_by,omitempty"`
	// Meta is what the index says of itself, as it was parsed when kept, so that what
	// needs only that (IndexName, pins, demotes) reads this line and not the index; nil
	// in a copy an older pkg kept.
	Meta *repo.Meta `json:"meta,omitempty"`
	data []byte
	read time.Time // the copy's mtime: when it was last current (loadIndex)
}

// VerifiedIndex returns the repository's index once the source's trust policy believes
// it and its Admit, if any, admits it, and how it passed. known are indexes of the
// repository accepted before, which it may not roll back; the copy kept in the cache
// counts as one while its signature still verifies. Online, it reads the index (asking
// only for a copy newer than the one kept) and its signature, and keeps both once they
// pass, replacing a kept copy that is damaged;
// offline, it verifies the copy kept, which may have expired since. A refused index
// changes nothing in the cache, and so does one no trusted key verifies, with a
// *trust.PinnedError, once the copy kept was verified. A *NotKeptError comes with the
// index it could not keep.
func (c *Cache) VerifiedIndex(ctx context.Context, s *Source, known ...trust.Record) (*repo.Index, trust.Result, error) {
	name, path := indexName(s.indexLocation()), c.indexPath(s)
	saved, err := loadIndex(c.index, name)
	if s.offline {
		return s.offlineIndex(saved, err, path, known)
	}
	if saved != nil {
		// Expired or not, a copy the publisher signed bounds the versions to come.
		floor := s.policy
		floor.AllowExpired = true
		if res, err := floor.Verify(s.URL(), saved.data, saved.Signature); err == nil && res.Verified() {
			known = append(known, res.Record)
		}
	}
	fresh, ix, res, err := s.readBelieved(ctx, c, saved, known)
	if re := (*readError)(nil); errors.As(err, &re) {
		if errors.Is(err, ErrUnreachable) || errors.Is(err, ErrNoRepository) || unknownHost(err) {
			err = s.offlineCopy(err, saved, path, known)
		}
		return nil, trust.Result{}, s.denied(err)
	}
	if err != nil {
		return nil, res, s.denied(err)
	}
	fresh.VerifiedBy, fresh.Meta = res.KeyIDs, &ix.Meta
	switch {
	case c.ReadOnly:
	case !fresh.differs(saved):
		// Best effort: the copy's time says when it was last current, for offlineCopy.
		now := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_NOW}}
		unix.UtimesNanoAt(int(c.index.Fd()), name, now, unix.AT_SYMLINK_NOFOLLOW)
	case !res.Verified() && fresh.demotes(saved):
		// Read without a key: a signed copy stays, as the floor for the next read with
		// the key and for --offline, unless this one is signed too and no older.
	default:
		if err := c.saveIndex(name, fresh); err != nil {
			return ix, res, &NotKeptError{Repo: s.URL(), Err: err}
		}
	}
	return ix, res, nil
}

// readBelieved reads the index from s, or from the first of its mirrors to serve one it
// believes, and believes it.
func (s *Source) readBelieved(ctx context.Context, c *Cache, saved *savedIndex, known []trust.Record) (*savedIndex, *repo.Index, trust.Result, error) {
	if s.m == nil {
		fresh, ix, res, err := s.readFrom(ctx, s, saved, known)
		return fresh, ix, res, s.named(err)
	}
	var fresh *savedIndex
	var ix *repo.Index
	var res trust.Result
	i, err := s.failover(ctx, c, func(e *Source) (err error) {
		fresh, ix, res, err = s.readFrom(ctx, e, saved, known)
		return err
	})
	if err == nil {
		s.m.use(i)
	}
	if me := (mirrorErrors)(nil); errors.As(err, &me) {
		// Told as a failure to read, for the offline note: each mirror's error says what
		// it was.
		err = &readError{fmt.Errorf("repository %s: every mirror failed: %w", s.URL(), err)}
	}
	return fresh, ix, res, err
}

// named returns err, a failure to read s's index, naming s where s is a registry's
// repository: its requests' URLs are the registry's API (/v2/NAME/manifests/TAG), not the
// reference the user gave. Where s has mirrors, each failure is named by mirrorError.
func (s *Source) named(err error) error {
	_, registry := s.t.(*ociLocation)
	re := (*readError)(nil)
	if !registry || !errors.As(err, &re) || errors.Is(err, ErrNoRepository) {
		return err
	}
	return &readError{fmt.Errorf("repository %s: %w", strings.TrimSuffix(s.URL(), "/"), re.err)}
}

// readFrom reads the index from e, s or one of its mirrors, and believes it as s's. A
// failure to read it is a *readError.
func (s *Source) readFrom(ctx context.Context, e *Source, saved *savedIndex, known []trust.Record) (*savedIndex, *repo.Index, trust.Result, error) {
	fresh, where, err := e.readIndex(ctx, saved)
	if err == nil && markup(fresh.data) {
		err = &noRepository{where, "it is a web page (HTML), not a pkg index (a login or error page in its place?)"}
	}
	if err != nil {
		return nil, nil, trust.Result{}, &readError{err}
	}
	ix, res, err := s.believe(fresh, where, s.policy, known)
	if errors.Is(err, trust.ErrBadSignature) && sleep(ctx, s.backoffFor(1)) == nil {
		// A publisher replaces index.json and index.json.sig one after the other, and a
		// read between the two finds them apart: read both again once.
		if again, w, err2 := e.readIndex(ctx, nil); err2 == nil {
			fresh, where = again, w
			ix, res, err = s.believe(fresh, where, s.policy, known)
		}
	}
	if err == nil {
		err = saved.pins(s, res)
	}
	return fresh, ix, res, err
}

// markup reports whether data, read as index.json, is HTML (or XML): no JSON begins
// with "<".
func markup(data []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(data), []byte("<")) }

// readError is a failure to read an index, as opposed to one to believe it.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// NotKeptError is returned by VerifiedIndex, with the index, when the index passed but the
// cache could not keep a copy of it (a full disk, say): --offline then has an older copy,
// or none.
type NotKeptError struct {
	Repo string
	Err  error
}

func (e *NotKeptError) Error() string {
	return fmt.Sprintf("could not keep a copy of the index of %s in the cache: %v", e.Repo, e.Err)
}

func (e *NotKeptError) Unwrap() error { return e.Err }

// pins refuses, with a *trust.PinnedError of the cache (no Root), the index res describes
// when no trusted key verified it and one verified saved.
func (saved *savedIndex) pins(s *Source, res trust.Result) error {
	if res.Verified() || saved == nil || len(saved.VerifiedBy) == 0 {
		return nil
	}
	m, _ := saved.meta()
	return &trust.PinnedError{Repo: s.URL(), Version: m.Version, KeyIDs: saved.VerifiedBy, SignedBy: res.SignedBy}
}

// demotes reports whether replacing saved, which carries a signature, with i would lose
// it or go back to an older version, as far as an unverified read can tell.
func (i *savedIndex) demotes(saved *savedIndex) bool {
	if saved == nil || saved.Signature == nil {
		return false
	}
	if i.Signature == nil {
		return true
	}
	was, err1 := saved.meta()
	now, err2 := i.meta()
	return err1 == nil && (err2 != nil || now.Version < was.Version)
}

// sameMeta reports whether a and b are both there and say the same.
func sameMeta(a, b *repo.Meta) bool {
	return a != nil && b != nil && a.Name == b.Name && a.Version == b.Version && a.Expires.Equal(b.Expires)
}

// meta returns what the index says of itself: as kept, or parsed from a copy an older pkg
// kept.
func (i *savedIndex) meta() (repo.Meta, error) {
	if i.Meta != nil {
		return *i.Meta, nil
	}
	return repo.ParseMeta(i.data)
}

// IndexTime returns when the copy of s's index kept in the cache was last read from the
// repository, changed or not; false when there is none.
func (c *Cache) IndexTime(s *Source) (time.Time, bool) {
	info, err := statAt(c.index, indexName(s.indexLocation()))
	if err != nil {
		return time.Time{}, false
	}
	return info.ModTime(), true
}

// offlineCopy returns err, the repository not reached, as an *offlineCopyError when an
// offline source would use the copy kept.
func (s *Source) offlineCopy(err error, saved *savedIndex, path string, known []trust.Record) error {
	if saved == nil {
		return err
	}
	if _, _, oerr := s.offlineIndex(saved, nil, path, known); oerr != nil {
		return err
	}
	return &offlineCopyError{err, saved.read}
}

// offlineCopyError is the failure to reach a repository whose index the cache holds, usable
// offline: it says how current that copy is.
type offlineCopyError struct {
	err  error
	read time.Time // when the copy was last current
}

func (e *offlineCopyError) Error() string {
	return e.err.Error() + "; the cache holds this repository's index as of " + e.read.Format("2006-01-02 15:04 MST") +
		", usable offline"
}

func (e *offlineCopyError) Unwrap() error { return e.err }

// offlineIndex returns the copy kept, verified again but accepted past its expiry: it is
// the newest the publisher signed that pkg has seen.
func (s *Source) offlineIndex(saved *savedIndex, err error, path string, known []trust.Record) (*repo.Index, trust.Result, error) {
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, trust.Result{}, err
	}
	if saved == nil {
		if err := s.t.checkRepository(); err != nil {
			return nil, trust.Result{}, err // no copy to go online for: the repository is not there
		}
		return nil, trust.Result{}, &offlineError{fmt.Sprintf("no saved index of %s (it is saved when pkg reads the repository online)", s)}
	}
	p := s.policy
	p.AllowExpired = true
	ix, res, err := s.believe(saved, path, p, known)
	if err == nil {
		err = saved.pins(s, res)
	}
	if err != nil {
		return nil, res, err
	}
	return ix, res, nil
}

// believe verifies an index under p, asks the source's Admit, then parses it.
func (s *Source) believe(si *savedIndex, where string, p trust.Policy, known []trust.Record) (*repo.Index, trust.Result, error) {
	res, err := p.Verify(s.URL(), si.data, si.Signature, known...)
	if err == nil && s.admit != nil {
		err = s.admit(res)
	}
	if err != nil {
		return nil, res, err
	}
	ix, err := repo.Parse(si.data)
	if err != nil {
		return nil, res, fmt.Errorf("%s: %w", where, err)
	}
	return ix, res, nil
}

// differs reports whether fresh should replace saved in the cache.
func (fresh *savedIndex) differs(saved *savedIndex) bool {
	return saved == nil || saved.ETag != fresh.ETag || saved.LastModified != fresh.LastModified ||
		!bytes.Equal(saved.data, fresh.data) || !bytes.Equal(saved.Signature, fresh.Signature) ||
		!slices.Equal(saved.VerifiedBy, fresh.VerifiedBy) || !sameMeta(saved.Meta, fresh.Meta)
}

// ForgetIndex removes the copy kept of the repository's index, so that its next index
// need not follow it.
func (c *Cache) ForgetIndex(s *Source) error {
	if err := removeAt(c.index, indexName(s.indexLocation())); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// indexPath names the copy of s's index in messages.
func (c *Cache) indexPath(s *Source) string { return c.indexFile(s.indexLocation()) }

// IndexName returns the name that the copy of s's index kept in the cache at dir gives its
// repository (repo.Meta.Name, which a signed index always has), or "" where there is no
// copy or it names none. It believes nothing: it is what the repository calls itself, for
// calling it so, not for trusting it.
func IndexName(dir string, s *Source) string {
	index, err := openCacheSubdir(dir, "index")
	if err != nil {
		return ""
	}
	defer index.Close()
	saved, ok := loadIndexHead(index, indexName(s.indexLocation()))
	if !ok || saved.Meta == nil {
		var err error
		if saved, err = loadIndex(index, indexName(s.indexLocation())); err != nil {
			return ""
		}
	}
	m, err := saved.meta()
	if err != nil {
		return ""
	}
	return m.Name
}

// IndexFiles returns the files that change when the index of s may have, for a caller that
// keeps what it made of the index while they do not: a directory's index.json and its
// signature, or, for a remote repository (remote true), the copy of its index kept in the
// cache at dir, which every read of the repository touches, changed or not.
func IndexFiles(dir string, s *Source) (paths []string, remote bool) {
	if d, ok := s.t.(directory); ok {
		return []string{d.indexLocation(), d.signatureLocation()}, false
	}
	return []string{indexFileIn(dir, s.indexLocation())}, true
}

// indexFile is where the copy of the index at location is kept.
func (c *Cache) indexFile(location string) string { return indexFileIn(c.dir, location) }

func indexFileIn(dir, location string) string {
	return filepath.Join(dir, "index", indexName(location))
}

// indexName is the name, in index/, of the copy of the index at location.
func indexName(location string) string {
	sum := sha256.Sum256([]byte(location))
	return hex.EncodeToString(sum[:]) + ".json"
}

// loadIndexHead returns the copy of an index kept under name with its first line read, not
// the index after it; false where there is none, or that line is over maxSavedHead (a
// server's ETag has no bound) or not one pkg wrote: loadIndex says which.
func loadIndexHead(index *os.File, name string) (*savedIndex, bool) {
	f, err := openSavedIndex(index, name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	head, err := bufio.NewReaderSize(f, maxSavedHead).ReadSlice('\n')
	saved := &savedIndex{}
	if err != nil || json.Unmarshal(head, saved) != nil {
		return nil, false
	}
	return saved, true
}

// openSavedIndex opens the copy of an index kept as name in the directory index, a
// regular file: a FIFO another user of a shared cache put there is refused, not waited on.
func openSavedIndex(index *os.File, name string) (*os.File, error) {
	f, err := dirfd.Open(index, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if err := regfile.Check(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// maxSavedHead bounds the first line of a kept index that loadIndexHead reads: a
// signature, a few key ids and the Meta.
const maxSavedHead = 64 << 10 // 64 KiB

// loadIndex reads the copy of an index kept as name in the directory index.
func loadIndex(index *os.File, name string) (*savedIndex, error) {
	f, err := openSavedIndex(index, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	path := f.Name()
	head, data, ok := bytes.Cut(b, []byte("\n"))
	saved := &savedIndex{data: data, read: info.ModTime()}
	if !ok || json.Unmarshal(head, saved) != nil {
		return nil, fmt.Errorf("%s is not a saved index (remove it)", path)
	}
	return saved, nil
}

func (c *Cache) saveIndex(name string, saved *savedIndex) error {
	head, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	return c.writeFile(c.index, name, func(w io.Writer) error {
		_, err := w.Write(append(append(head, '\n'), saved.data...))
		return err
	})
}

// readIndex reads the index and its signature. Given the copy kept, it returns a copy of
// it, with the signature read, when the server says the index has not changed. It reads
// the signature even when the policy has no key to check it, so that the copy kept can be
// checked offline once a key is trusted. Both must come within the source's index
// timeout, retries included.
func (s *Source) readIndex(ctx context.Context, saved *savedIndex) (*savedIndex, string, error) {
	tctx, cancel := context.WithTimeoutCause(ctx, s.indexMax, errIndexTimeout)
	defer cancel()
	fresh, where, err := s.readIndexSigned(tctx, saved)
	if err != nil && ctx.Err() == nil && context.Cause(tctx) == errIndexTimeout {
		err = &timeoutError{where: s.indexLocation(), wait: s.indexMax}
	}
	return fresh, where, err
}

// errIndexTimeout is the cause of the context of an index read that took too long.
var errIndexTimeout = errors.New("fetch: index timeout")

func (s *Source) readIndexSigned(ctx context.Context, saved *savedIndex) (*savedIndex, string, error) {
	fresh, where, err := s.t.readIndex(ctx, saved, s.attempts())
	if err != nil {
		return nil, where, err
	}
	sig, err := s.t.readSignature(ctx, s.attempts())
	if err != nil && (len(s.policy.Keys) > 0 || s.policy.RequireSigned) {
		return nil, where, err
	}
	// Last-Modified counts whole seconds, so an index replaced within the second it was
	// read is "not modified"; a new signature says it was.
	if saved != nil && bytes.Equal(fresh.data, saved.data) && !bytes.Equal(sig, saved.Signature) {
		if fresh, where, err = s.t.readIndex(ctx, nil, s.attempts()); err != nil {
			return nil, where, err
		}
	}
	fresh.Signature = sig // a signature nobody can check is only kept for later
	return fresh, where, nil
}

// readLimited reads what from r, read at where, refusing more than limit bytes with a
// *TooLargeError.
func readLimited(r io.Reader, limit int64, where, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", where, err)
	case int64(len(data)) > limit:
		return nil, &TooLargeError{URL: where, Name: what, Limit: limit}
	}
	return data, nil
}

// TooLargeError refuses a file over its size limit: a repository's index.json or
// index.json.sig as read at URL (a URL, or a local repository's path), or a file of the
// cache's own.
type TooLargeError struct {
	URL   string // where it was read: a URL, or a local repository's file
	Name  string // the file's name
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("read %s: %s is over the %d-byte limit (no repository needs one this big: refusing it)", e.URL, e.Name, e.Limit)
}
