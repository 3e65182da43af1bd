package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path/filepath"
	"time"

	"pkg/fetch"
	"pkg/internal/oci"
	"pkg/internal/regfile"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/trust"
)

// DefaultChunk is the size of the chunks of a blob pushed in several requests, and the
// largest blob pushed in one: 64 MiB, under the request body limits of common reverse
// proxies in front of registries (nginx's client_max_body_size is often raised to about
// that for registries; Cloudflare's plans stop at 100 MB), and few enough requests for
// a large archive.
const DefaultChunk = 64 << 20

// PushOptions are how Push uploads.
type PushOptions struct {
	Chunk int64 // blobs larger than this go in chunks of this many bytes; 0 is DefaultChunk

	// Sent, if not nil, is called after each blob sent, with what it is (a path, or "the
	// manifest's config") and its size.
	Sent func(what string, size int64)

	// Retrying, if not nil, is called before each wait to send a request again, as
	// fetch.Options.Retrying is: the read of what the tag names after any failure that
	// may pass, the others after the registry or its token realm refused them for now
	// (429 Too Many Requests, 500, 502, 503 or 504: oci.Busy).
	Retrying func(err error, wait time.Duration, attempt, max int)

	// The credentials for the registry beside those in the target's URL, as a Source
	// takes them (fetch.Options): the repository's own (a token, or a user and
	// password), a netrc file, and whether they may go over plain http to another machine.
	Username, Password, Token string
	Netrc                     string
	CleartextCredentials      bool

	// CredentialFrom says where the repository's own credential came from,
	// CredentialVars names the variables one is looked for in, and Repo is the
	// repository's name, for a refusal's *fetch.DeniedError, as fetch.Options does. None
	// is sent.
	CredentialFrom string
	CredentialVars []string
	Repo           string

	// Force pushes an index older than the one the tag names, or of its version with
	// other bytes (*OlderError), or of another repository (*RepositoryError), or an
	// unsigned index over a signed one (*SignatureError): for a publisher who started
	// over, whose clients forget the one tagged; and over a tag naming what is not a pkg
	// repository (*TagError).
	Force bool
}

// Pushed is what Push did.
type Pushed struct {
	Ref      string   // the registry repository and tag, as oci://HOST/NAME:TAG/
	Uploaded int      // blobs sent
	Bytes    int64    // their bytes
	Present  int      // blobs the registry had already
	Manifest string   // the manifest's digest
	External []string // archives the index names by an absolute URL, which stay there
}

// ErrPushChunk is the error for a chunk size that is not positive.
var ErrPushChunk = errors.New("publish: chunk size must be positive")

// ErrTooLarge is in a *PushError whose request's body the registry, or a proxy in front
// of it, refused as larger than it takes (HTTP 413): smaller chunks may pass.
var ErrTooLarge = oci.ErrTooLarge

// ErrNoIndex is in the error of a push of a directory that holds no index.json: not a
// repository directory, or none yet. fs.ErrNotExist is in it too.
var ErrNoIndex = errors.New("publish: no index.json")

// noIndexError is ErrNoIndex for the directory dir, its index.json's error err.
type noIndexError struct {
	dir string
	err error
}

func (e *noIndexError) Error() string {
	return fmt.Sprintf("push %s: %s does not exist: not a repository directory", e.dir, filepath.Join(e.dir, "index.json"))
}

func (e *noIndexError) Unwrap() []error { return []error{ErrNoIndex, e.err} }

// ErrArchiveChanged is in the *PushError of an archive whose bytes are not the sha256 its
// index entry records (changed or damaged since it was added), which the registry refused.
var ErrArchiveChanged = errors.New("publish: archive not the sha256 its index entry records")

// OlderError refuses a push of an index of Version, older than the one of Tagged the
// reference Ref names, or of that version with other bytes: every client that accepted
// that one would refuse this one, as a rollback or as a version reused.
type OlderError struct {
	Ref             string
	Version, Tagged uint64
}

func (e *OlderError) Error() string {
	if e.Version == e.Tagged {
		return fmt.Sprintf("push to %s: index version %d differs from the version %d tagged there now", e.Ref, e.Version, e.Tagged)
	}
	return fmt.Sprintf("push to %s: index version %d is older than version %d, tagged there now", e.Ref, e.Version, e.Tagged)
}

// RepositoryError refuses a push to Ref of the index of repository Name where the tag
// names the index of repository Tagged (either "" for an index that names none): every
// client of that one would refuse this one as another repository's (trust.ErrWrongName).
type RepositoryError struct {
	Ref, Name, Tagged string
}

func (e *RepositoryError) Error() string {
	return fmt.Sprintf("push to %s: the index is of %s, but the tag names %s's", e.Ref, RepositoryName(e.Name), RepositoryName(e.Tagged))
}

// RepositoryName words the repository an index names for a message: "repository NAME", or
// "an unnamed repository".
func RepositoryName(name string) string {
	if name == "" {
		return "an unnamed repository"
	}
	return "repository " + name
}

// SignatureError refuses a push to Ref of an unsigned index where the tag names a signed
// one: every client that accepted that one refuses this one, as trust pinned the
// repository to a key (trust.ErrPinned, trust.ErrUnsigned).
type SignatureError struct {
	Ref string
}

func (e *SignatureError) Error() string {
	return fmt.Sprintf("push to %s: the index is not signed (no %s), but the one tagged there is", e.Ref, repo.SignatureName)
}

// TagError refuses a push to Ref, whose tag names a manifest that is not a pkg
// repository's (a container image), which the push would replace. Err wraps
// oci.ErrManifest.
type TagError struct {
	Ref string
	Err error
}

func (e *TagError) Error() string {
	return fmt.Sprintf("push to %s: the tag names what is not a pkg repository (%v), which the push would replace", e.Ref, e.Err)
}

func (e *TagError) Unwrap() error { return e.Err }

// PushError is the failure of a blob's upload: What (a path, or "the manifest's config")
// of Digest and Size bytes, to Registry, in a push whose blobs over Chunk bytes go in
// chunks of that many.
type PushError struct {
	What, Digest, Registry string
	Size, Chunk            int64
	Err                    error
}

func (e *PushError) Error() string {
	return fmt.Sprintf("push %s (%s) to %s: %v", e.What, e.Digest, e.Registry, e.Err)
}

func (e *PushError) Unwrap() error { return e.Err }

// Push uploads the repository in dir to the registry repository target (an oci URL): its
// index.json, index.json.sig if there is one, and each archive the index names by a path,
// as blobs (those the registry has already are not sent again), then the manifest that
// names them all (docs/registry.md) under the target's tag. Archives the index names by an
// absolute URL stay where they are, and are named in Pushed.External. An index older than
// the one the tag names, or of its version with other bytes, is refused before anything
// is sent (*OlderError), and so are an index of another repository than the one the tag
// names (*RepositoryError), an unsigned index where the tag names a signed one
// (*SignatureError) and a tag naming what is not a pkg repository, a container image
// (*TagError), unless o.Force.
func Push(ctx context.Context, dir, target string, o PushOptions) (Pushed, error) {
	if o.Chunk == 0 {
		o.Chunk = DefaultChunk
	}
	if o.Chunk < 0 {
		return Pushed{}, ErrPushChunk
	}
	fo := fetch.Options{Credential: fetch.Credential{Username: o.Username, Password: o.Password, Token: o.Token},
		Netrc: o.Netrc, CleartextCredentials: o.CleartextCredentials, CredentialFrom: o.CredentialFrom, CredentialVars: o.CredentialVars,
		Repo: o.Repo, Retrying: o.Retrying}
	c, err := fetch.Registry(target, fo)
	if err != nil {
		return Pushed{}, err
	}
	regErr := func(err error) error { return fetch.RegistryError(err, target, fo) }
	res := Pushed{Ref: c.Ref().String()}
	blobs, err := pushBlobs(dir, &res)
	if err != nil {
		return res, err
	}
	if !o.Force {
		if err := checkNewer(ctx, c, blobs[1].data, len(blobs) > 2 && blobs[2].title == repo.SignatureName, o.Retrying, regErr); err != nil {
			return res, err
		}
	}
	m := oci.NewManifest(nil, nil)
	for _, b := range blobs {
		if b.title != "" {
			m.Layers = append(m.Layers, oci.NewLayer(b.title, b.mediaType, b.digest, b.size))
		}
		have, err := c.HasBlob(ctx, b.digest)
		if err != nil {
			return res, pushError(c, b, o.Chunk, regErr(err))
		}
		if have {
			res.Present++
			continue
		}
		if err := b.push(ctx, c, o.Chunk); err != nil {
			return res, pushError(c, b, o.Chunk, regErr(err))
		}
		res.Uploaded++
		res.Bytes += b.size
		if o.Sent != nil {
			o.Sent(b.what, b.size)
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return res, err
	}
	if len(data) > oci.MaxManifestSize {
		return res, fmt.Errorf("push %s to %s: the manifest of %d layers takes %d bytes, over the %d registries take", dir, res.Ref, len(m.Layers), len(data), oci.MaxManifestSize)
	}
	if err := c.PutManifest(ctx, c.Ref().Tag, oci.MediaTypeManifest, data); err != nil {
		return res, fmt.Errorf("push %s to %s: manifest %s: %w", dir, res.Ref, oci.Digest(data), regErr(err))
	}
	res.Manifest = oci.Digest(data)
	return res, nil
}

// checkNewer refuses index, as an *OlderError, when the index c's tag names now has a
// higher version, or the same one with other bytes (trust.ErrReused to a client), as a
// *RepositoryError when that index names another repository (trust.ErrWrongName), as a
// *SignatureError when index is not signed but that one is, and as a *TagError when the
// tag names what is not a pkg repository. An index that does not parse, or none, passes.
// Each wait to read it again is told to retrying; regErr words a registry's refusal
// (fetch.RegistryError).
func checkNewer(ctx context.Context, c *oci.Client, index []byte, signed bool, retrying func(error, time.Duration, int, int), regErr func(error) error) error {
	tagged, wasSigned, err := fetch.TaggedIndex(ctx, c, retrying)
	if errors.Is(err, oci.ErrManifest) {
		return &TagError{Ref: c.Ref().String(), Err: err}
	}
	if err != nil {
		return fmt.Errorf("push to %s: read the index tagged there: %w", c.Ref(), regErr(err))
	}
	if tagged == nil {
		return nil
	}
	was, err := repo.ParseMeta(tagged)
	if err != nil {
		return nil
	}
	now, err := repo.ParseMeta(index)
	if err != nil {
		return err
	}
	if now.Name != was.Name { // as strict as trust.Record.Follows, which each client applies
		return &RepositoryError{Ref: c.Ref().String(), Name: now.Name, Tagged: was.Name}
	}
	if now.Version < was.Version || now.Version == was.Version && !bytes.Equal(index, tagged) {
		return &OlderError{Ref: c.Ref().String(), Version: now.Version, Tagged: was.Version}
	}
	if wasSigned && !signed {
		return &SignatureError{Ref: c.Ref().String()}
	}
	return nil
}

// pushError is err, of the upload of b in chunks of chunk bytes (fetch.RegistryError's),
// as a *PushError.
func pushError(c *oci.Client, b blob, chunk int64, err error) error {
	return &PushError{What: b.what, Digest: b.digest, Registry: c.Ref().Registry(), Size: b.size, Chunk: chunk, Err: err}
}

// blob is one blob of a push: the empty config, the index, its signature or an archive.
type blob struct {
	title, mediaType string // title "" for the config
	what             string // for messages: a path, or "the manifest's config"
	digest           string
	size             int64
	data             []byte // the index, signature and config, read whole
	path             string // an archive, read at its push
}

// pushBlobs returns the blobs of the repository in dir, in the manifest's order (the
// config first): the index and signature read now, so that what is pushed is one
// version of them, each archive by its index entry's sha256 and size, which the registry
// checks as it takes it.
func pushBlobs(dir string, res *Pushed) ([]blob, error) {
	index, err := regfile.ReadFile(filepath.Join(dir, "index.json"), repo.MaxIndexSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &noIndexError{dir, err}
	}
	if err != nil {
		return nil, err
	}
	ix, err := repo.Parse(index)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "index.json"), err)
	}
	blobs := []blob{
		{what: "the manifest's config", digest: oci.Empty.Digest, size: oci.Empty.Size, data: oci.Empty.Data},
		{title: "index.json", mediaType: oci.MediaTypeIndex, what: filepath.Join(dir, "index.json"), data: index},
	}
	sig, err := regfile.ReadFile(filepath.Join(dir, repo.SignatureName), trust.MaxSignatureSize)
	switch {
	case err == nil:
		blobs = append(blobs, blob{title: repo.SignatureName, mediaType: oci.MediaTypeSignature, what: filepath.Join(dir, repo.SignatureName), data: sig})
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	for i := range blobs[1:] {
		b := &blobs[1+i]
		b.digest, b.size = oci.Digest(b.data), int64(len(b.data))
	}
	seen := map[string]bool{}
	for _, p := range ix.Packages {
		if u, err := url.Parse(p.Archive); err == nil && u.Scheme != "" {
			res.External = append(res.External, termtext.WithoutUser(u)) // an older pkg's index may hold a token
			continue
		}
		if seen[p.SHA256] {
			continue
		}
		seen[p.SHA256] = true
		if !filepath.IsLocal(filepath.FromSlash(p.Archive)) {
			return nil, fmt.Errorf("%s %s: archive %s is not beneath %s", p.Name, p.Version, termtext.WithoutCredentials(p.Archive), dir)
		}
		blobs = append(blobs, blob{title: p.Archive, mediaType: oci.MediaTypeArchive, what: filepath.Join(dir, filepath.FromSlash(p.Archive)),
			digest: "sha256:" + p.SHA256, size: p.Size, path: filepath.Join(dir, filepath.FromSlash(p.Archive))})
	}
	return blobs, nil
}

// push uploads b.
func (b blob) push(ctx context.Context, c *oci.Client, chunk int64) error {
	if b.path == "" {
		return c.PushBlob(ctx, b.digest, bytes.NewReader(b.data), b.size, chunk)
	}
	f, err := regfile.Open(b.path, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != b.size {
		return fmt.Errorf("%d bytes, the index says %d", st.Size(), b.size)
	}
	err = c.PushBlob(ctx, b.digest, f, b.size, chunk)
	if err != nil {
		if got, herr := fileDigest(f); herr == nil && got != b.digest {
			return fmt.Errorf("%w: the file's is %s", ErrArchiveChanged, got)
		}
	}
	return err
}

// fileDigest returns the sha256 digest of the bytes of f, from its start.
func fileDigest(f io.ReaderAt) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
