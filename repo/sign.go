package repo

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"pkg/internal/regfile"
)

// SignatureName is the file next to index.json that holds its detached signature.
const SignatureName = indexName + ".sig"

// Signer makes the index that Sign or Add writes a signed one.
type Signer struct {
	Name    string                    // the repository's name: "" keeps the index's, else takes the directory's
	Expires time.Time                 // when the signed index goes stale
	Sign    func(index []byte) []byte // the contents of index.json.sig for exactly these bytes
}

// An UnsignedError is a repository left with a new index.json and the old signature,
// which users refuse, as writing the new signature failed: signing it again mends it.
type UnsignedError struct {
	Dir string
	Err error // why the signature could not be written
}

func (e *UnsignedError) Error() string {
	return fmt.Sprintf("%v: %s now holds the new index.json with the old signature, which users refuse", e.Err, e.Dir)
}

func (e *UnsignedError) Unwrap() error { return e.Err }

// ErrSigned refuses to write an index without a signer into a signed directory: its
// signature would no longer match.
var ErrSigned = errors.New("repo: repository signed, and no key to sign with")

// ErrUnnamed refuses to sign an index that names no repository, in a directory whose name
// is not a valid one to take.
var ErrUnnamed = errors.New("repo: repository not named")

// signedError is an ErrSigned that says which directory.
type signedError struct{ msg string }

func (e *signedError) Error() string        { return e.msg }
func (e *signedError) Is(target error) bool { return target == ErrSigned }

// Sign signs dir's index.json: it sets the index's name, adds one to its version, sets its
// expiry, and writes the index and then its signature, each atomically. It returns the
// index as signed. It waits for the directory's lock only until ctx is done.
func Sign(ctx context.Context, dir string, s *Signer) (*Index, error) {
	ix, err := sign(ctx, dir, s)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", dir, err)
	}
	return ix, nil
}

func sign(ctx context.Context, dir string, s *Signer) (*Index, error) {
	if _, err := os.Stat(filepath.Join(dir, indexName)); errors.Is(err, fs.ErrNotExist) {
		return nil, &reasonError{msg: fmt.Sprintf("no %s to sign (add a package first)", indexName), reason: fs.ErrNotExist, cause: err}
	}
	ix, unlock, err := lockedIndex(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := stamp(dir, ix, s); err != nil {
		return nil, err
	}
	return ix, writeIndex(dir, ix, s)
}

// AddURL is Add for an archive published elsewhere, at the http(s) URL archiveURL,
// of which archivePath is a download: the index records the URL as p's Archive and the
// size and sha256 of archivePath, and dir gets no copy. An install fetches the URL and
// checks that it still serves those bytes.
func AddURL(ctx context.Context, dir, archiveURL, archivePath string, p Package, replace bool, s *Signer) (*Added, error) {
	res, err := add(ctx, dir, archivePath, archiveURL, p, replace, s)
	if re := (*RepublishError)(nil); errors.As(err, &re) {
		return nil, re
	}
	if err != nil {
		return nil, fmt.Errorf("add %s to %s: %w", archiveURL, dir, err)
	}
	return res, nil
}

// stamp sets ix's Meta for its next signing by s. Without a signer it instead refuses a
// signed directory, whose signature would no longer match the index written.
func stamp(dir string, ix *Index, s *Signer) error {
	if s == nil {
		if _, err := os.Stat(filepath.Join(dir, SignatureName)); err == nil {
			return &signedError{fmt.Sprintf("%s is signed: sign the new index with the repository's key, or remove %s to publish it unsigned", dir, SignatureName)}
		}
		return nil
	}
	name := cmp.Or(s.Name, ix.Name)
	if name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		if name = filepath.Base(abs); !validRepoName(name) {
			return &reasonError{msg: fmt.Sprintf("the index names no repository, and the directory's name %q is not a valid repository name ([a-z0-9][a-z0-9._+-]*)", name), reason: ErrUnnamed}
		}
	}
	switch {
	case !validRepoName(name):
		return badRepoName(name)
	case s.Expires.IsZero():
		return errors.New("no expiry time for the signed index")
	case ix.Version >= maxIndexVersion:
		return &reasonError{msg: fmt.Sprintf("index version %d is the last a signed index may have", ix.Version), reason: ErrLimit}
	}
	ix.Name, ix.Version, ix.Expires = name, ix.Version+1, s.Expires.UTC().Truncate(time.Second)
	return nil
}

// writeIndex writes ix as dir's index.json and, given a signer, then its signature.
func writeIndex(dir string, ix *Index, s *Signer) error {
	ix.Format = indexFormat
	var b bytes.Buffer
	if err := ix.encode(&b); err != nil {
		return err
	}
	if err := writeFile(dir, indexName, writeBytes(b.Bytes())); err != nil {
		return err
	}
	if s == nil {
		return nil
	}
	if err := writeFile(dir, SignatureName, writeBytes(s.Sign(b.Bytes()))); err != nil {
		return &UnsignedError{Dir: dir, Err: err}
	}
	return nil
}

// unchanged reports whether an add that turned dir's index of the entries had and Meta
// meta into ix, stamped for s, leaves it as it was: the same entries and, given a signer
// s, signed already under the name stamp gave, by a signature not yet expired that s
// would make of the index as it is (its keys' signatures are deterministic: a signature
// by another key, or of an index edited since, is made again). Such an add writes
// nothing, neither index nor signature of a new version, as reprepro exports only a
// distribution that changed.
func unchanged(dir string, had []Package, meta Meta, ix *Index, s *Signer) bool {
	if jsonText(had) != jsonText(ix.Packages) {
		return false
	}
	if s == nil {
		return true
	}
	if ix.Name != meta.Name || !time.Now().Before(meta.Expires) {
		return false
	}
	index, err := regfile.ReadFile(filepath.Join(dir, indexName), MaxIndexSize)
	if err != nil {
		return false
	}
	sig, err := regfile.ReadFile(filepath.Join(dir, SignatureName), maxSignatureSize)
	return err == nil && bytes.Equal(sig, s.Sign(index))
}

// maxSignatureSize bounds the signature unchanged reads (trust.MaxSignatureSize's).
const maxSignatureSize = 16 << 10

func writeBytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}
