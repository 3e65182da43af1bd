package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"pkg/internal/oci"
	"pkg/internal/termtext"
	"pkg/repo"
	"pkg/trust"
)

// ociLocation is a repository held by an OCI registry (docs/registry.md): the manifest
// tagged in its reference names index.json and index.json.sig as layers, fetched by
// digest, and each archive is the blob whose digest is its sha256 in the index, fetched
// through download as any archive is, so that it resumes with Range. The registry's
// digests are only a transport check: the signed index stays the authority. Requests go
// through an oci.Client, which answers the registry's token challenges.
type ociLocation struct {
	ref    oci.Ref
	n      *netConfig
	reg    *oci.Client
	client *http.Client // through reg

	mu  sync.Mutex
	sig *oci.Descriptor // the signature's layer in the manifest last read; nil for none
}

var _ transport = (*ociLocation)(nil)

func newOCILocation(u *url.URL, n *netConfig) (transport, error) {
	ref, err := oci.ParseRef(u)
	if err != nil {
		return nil, err
	}
	l := &ociLocation{ref: ref, n: n}
	l.reg = newRegistryClient(ref, u.User, n)
	l.client = &http.Client{Transport: l.reg, CheckRedirect: checkRedirect}
	return l, nil
}

// newRegistryClient returns the client of the registry repository ref, authenticated as
// n's other requests are (credentials.go): the repository's own credential, else the
// user information of its URL, user, else the netrc's entry for the registry's host. A
// user and password go to the token realm the registry's challenge names (or to the
// registry, for a Basic challenge), a token to the registry itself; none in cleartext to
// another machine unless the repository allows it.
func newRegistryClient(ref oci.Ref, user *url.Userinfo, n *netConfig) *oci.Client {
	return oci.NewClient(ref, oci.Options{Transport: newTransport(), CheckRedirect: checkRedirect, UserAgent: userAgent,
		Credentials: registrySecret(n, ref.HTTPScheme(), user), Again: n.again})
}

// again waits before a request of a registry client's own (a push's) that the registry or
// its token realm refused for now (oci.Busy) is sent again, after its attempt-th answer,
// as retry waits before a read is (oci.Options.Again): it gives up after as many
// attempts, or where the answer asks for a wait longer than maxRetryAfter, as
// ErrUnreachable.
func (s *netConfig) again(ctx context.Context, err error, attempt int) error {
	if attempt >= s.tries {
		return &giveUpError{err, attempt}
	}
	return s.pause(ctx, err, attempt)
}

// registrySecret returns the credentials of a registry spoken to in scheme: of n (read
// when asked: n.creds is set once every location is parsed), else user, the user
// information of its URL; none in cleartext to another machine, but user to the scheme,
// host and port written, as an http:// URL's is sent (docs/config.md#credentials).
func registrySecret(n *netConfig, scheme string, user *url.Userinfo) oci.Credentials {
	return func(host string, to *url.URL) (oci.Secret, error) {
		cr, from, err := n.creds.credential(host)
		if err != nil {
			return oci.Secret{}, err
		}
		if from != fromRepo && user != nil {
			pass, _ := user.Password()
			cr, from = Credential{Username: user.Username(), Password: pass}, fromURL
		}
		switch {
		case from == fromNone:
			return oci.Secret{}, nil
		case from == fromURL && to.Scheme == scheme && strings.EqualFold(to.Host, host): // as written
		case to.Scheme != "https" && (n.creds == nil || !n.creds.cleartext) && !loopback(to.Hostname()):
			if from == fromDefault {
				return oci.Secret{}, nil
			}
			return oci.Secret{}, &CleartextError{Host: to.Host}
		}
		return oci.Secret{User: cr.Username, Password: cr.Password, Token: cr.Token}, nil
	}
}

// archiveRegistry returns the registry of an archive named by an absolute oci URL,
// oci://HOST/NAME:TAG/PATH as a lockfile records one, and PATH: a lockfile's URL pointed
// at another registry than its repository's (a mirror) is that registry's blob, as an
// http URL is its server's, through one client per registry repository and Source, which
// keeps its tokens. Requests there carry what credentials s gives its host.
func (s *Source) archiveRegistry(u *url.URL) (transport, string, error) {
	i := strings.IndexByte(u.Path, ':')
	j := strings.IndexByte(u.Path[i+1:], '/')
	if i < 0 || j < 0 {
		return nil, "", &locationError{loc: termtext.WithoutUser(u), err: fmt.Errorf("%w: not oci://HOST/NAME:TAG/PATH", oci.ErrRef)}
	}
	ref := *u
	ref.Path, ref.RawPath = u.Path[:i+1+j+1], ""
	rel := u.Path[i+1+j+1:]
	if t, ok := s.elsewhere.Load(ref.String()); ok {
		return t.(transport), rel, nil
	}
	t, err := newOCILocation(&ref, s.netConfig)
	if err != nil {
		return nil, "", &locationError{loc: termtext.WithoutUser(u), err: err}
	}
	kept, _ := s.elsewhere.LoadOrStore(ref.String(), t)
	return kept.(transport), rel, nil
}

// net returns the location's netConfig, its requests sent through the registry client.
func (l *ociLocation) net() *netConfig {
	n := *l.n
	n.client = func() *http.Client { return l.client }
	return &n
}

func (l *ociLocation) url() string { return l.ref.String() }

func (l *ociLocation) indexLocation() string { return l.archiveURL("index.json") }

func (l *ociLocation) archiveURL(rel string) string {
	return l.ref.String() + (&url.URL{Path: rel}).EscapedPath()
}

func (l *ociLocation) remote() bool { return true }

func (l *ociLocation) checkRepository() error { return nil }

// readIndex reads the manifest, then the index's blob unless its digest is saved's: the
// digest is the copy's ETag.
func (l *ociLocation) readIndex(ctx context.Context, saved *savedIndex, tries int) (*savedIndex, string, error) {
	m, err := l.taggedManifest(ctx, tries)
	if err != nil {
		return nil, l.indexLocation(), err
	}
	return l.indexOf(ctx, m, saved, tries)
}

// taggedManifest reads the manifest of the reference's tag, retrying.
func (l *ociLocation) taggedManifest(ctx context.Context, tries int) (*oci.Manifest, error) {
	var m *oci.Manifest
	err := l.n.retry(ctx, tries, func() (err error) {
		m, err = l.manifest(ctx)
		return err
	})
	return m, registryError(err)
}

// indexOf reads the index.json m names, as readIndex.
func (l *ociLocation) indexOf(ctx context.Context, m *oci.Manifest, saved *savedIndex, tries int) (*savedIndex, string, error) {
	where := l.indexLocation()
	idx, ok := m.Layer("index.json")
	if !ok {
		return nil, where, &noRepository{l.url(), "its manifest has no layer titled index.json"}
	}
	l.mu.Lock()
	l.sig = nil
	if d, ok := m.Layer(repo.SignatureName); ok {
		l.sig = &d
	}
	l.mu.Unlock()
	if saved != nil && saved.Location == where && saved.ETag == idx.Digest {
		kept := *saved
		return &kept, where, nil
	}
	fresh := &savedIndex{Location: where, ETag: idx.Digest}
	var err error
	fresh.data, err = l.blob(ctx, idx, repo.MaxIndexSize, "index.json", tries)
	return fresh, where, err
}

// manifest reads the manifest of the reference's tag once.
func (l *ociLocation) manifest(ctx context.Context) (*oci.Manifest, error) {
	u := l.ref.ManifestURL(l.ref.Tag)
	n := l.net()
	resp, err := n.send(ctx, u, http.Header{"Accept": {oci.Accept}}, n.answer)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, &noRepository{l.url(), "the registry has no manifest tagged " + l.ref.Tag + " (" + resp.Status + ")"}
	default:
		return nil, newStatusError(u, resp)
	}
	b, err := readLimited(resp.Body, oci.MaxManifestSize, termtext.WithoutUser(u), "the manifest")
	if err != nil {
		return nil, err
	}
	if d := resp.Header.Get("Docker-Content-Digest"); d != "" && d != oci.Digest(b) {
		return nil, &digestError{registry: l.ref.Registry(), what: "the manifest", digest: d, got: oci.Digest(b)}
	}
	m, err := oci.ParseManifest(b, resp.Header.Get("Content-Type"))
	if err != nil {
		return nil, &otherManifest{noRepository{l.url(), err.Error()}, err}
	}
	return m, nil
}

// otherManifest is a tag's manifest that is not pkg's artifact (a container image): no
// repository to a reader, and what a push would replace. It unwraps to oci.ErrManifest.
type otherManifest struct {
	noRepository
	err error
}

func (e *otherManifest) Unwrap() error { return e.err }

// blob reads the blob d, at most limit bytes, named what, and checks it against its digest.
func (l *ociLocation) blob(ctx context.Context, d oci.Descriptor, limit int64, what string, tries int) ([]byte, error) {
	u := l.ref.BlobURL(d.Digest)
	if d.Size > limit {
		return nil, &TooLargeError{URL: termtext.WithoutUser(u), Name: what, Limit: limit}
	}
	var b []byte
	n := l.net()
	err := n.retry(ctx, tries, func() error {
		resp, err := n.send(ctx, u, nil, n.answer)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return newStatusError(u, resp)
		}
		b, err = readLimited(resp.Body, limit, termtext.WithoutUser(u), what)
		return err
	})
	if err != nil {
		return nil, registryError(err)
	}
	if got := oci.Digest(b); got != d.Digest || int64(len(b)) != d.Size {
		return nil, &digestError{registry: l.ref.Registry(), what: what, digest: d.Digest, got: got}
	}
	return b, nil
}

func (l *ociLocation) readSignature(ctx context.Context, tries int) ([]byte, error) {
	l.mu.Lock()
	sig := l.sig
	l.mu.Unlock()
	if sig == nil {
		return nil, nil
	}
	return l.blob(ctx, *sig, trust.MaxSignatureSize, repo.SignatureName, tries)
}

// open downloads the blob whose digest is the archive's sha256, as an http location
// downloads a file: resuming with Range where a body is cut.
func (l *ociLocation) open(ctx context.Context, rel, sum string, size, off int64, restart bool, tries int) (body, error) {
	d := "sha256:" + sum
	if !oci.ValidDigest(d) {
		return nil, fmt.Errorf("archive %s: sha256 %q is not 64 lowercase hex digits", rel, sum)
	}
	b, err := l.net().openDownload(ctx, l.ref.BlobURL(d), size, off, restart, tries)
	if err != nil {
		return nil, registryError(err)
	}
	return b, nil
}

// ErrDigest is what the error for an index, a signature or a manifest a registry served
// with other bytes than their digest is. (An archive's blob is checked against the index,
// as any download is: ErrMismatch.)
var ErrDigest = errors.New("fetch: registry served other bytes than the digest")

// digestError refuses a blob or manifest whose bytes are not those of the digest asked
// for: a registry serving other bytes. It is ErrDigest.
type digestError struct {
	registry, what, digest, got string
}

func (e *digestError) Error() string {
	return fmt.Sprintf("registry %s: %s, blob %s: the registry served bytes of digest %s", e.registry, e.what, e.digest, e.got)
}

func (e *digestError) Is(target error) bool { return target == ErrDigest }

// ErrRealm is what a registry's token realm that pkg refused to ask is: in plain http
// for a registry over https, or on a loopback or link-local address the registry is not
// on (oci.RealmError).
var ErrRealm = errors.New("fetch: registry token realm refused")

// registryAuthError is a refusal of the registry's token realm, or by it: ErrRealm, or
// ErrDenied.
type registryAuthError struct {
	err    error
	denied bool
}

func (e *registryAuthError) Error() string { return e.err.Error() }
func (e *registryAuthError) Unwrap() error { return e.err }
func (e *registryAuthError) Is(target error) bool {
	return target == ErrDenied && e.denied || target == ErrRealm && !e.denied
}

// registryError makes err ErrDenied where the token realm or the registry refused the
// credentials, and ErrRealm where pkg refused the realm.
func registryError(err error) error {
	var te *oci.TokenError
	var qe *oci.RequestError
	var re *oci.RealmError
	switch {
	case errors.As(err, &te) && te.Denied(), errors.As(err, &qe) && qe.Denied():
		return &registryAuthError{err, true}
	case errors.As(err, &re):
		return &registryAuthError{err, false}
	}
	return err
}

// RegistryError returns err, an error of the registry client Registry(loc, o) returned,
// as ErrDenied where the token realm or the registry refused the credentials, in a
// *DeniedError as a Source's, and as ErrRealm where pkg refused the realm.
func RegistryError(err error, loc string, o Options) error {
	return refusal(o, loc).denied(registryError(err))
}

// Registry returns the client of the registry repository at loc, an oci URL, made as a
// Source there makes its own: the same transport, redirect policy and credentials (o's
// Credential, Netrc and CleartextCredentials), and a request of its own refused for now
// (oci.Busy) sent again as a Source's read is, each wait told to o.Retrying; the rest of
// o is not used, but by RegistryError.
func Registry(loc string, o Options) (*oci.Client, error) {
	n := newNetConfig(o.Retrying)
	l, err := parseLocation(loc, n)
	if err != nil {
		return nil, err
	}
	ol, ok := l.t.(*ociLocation)
	if !ok {
		why := "a directory is not a registry"
		if u, err := url.Parse(loc); err == nil && u.Scheme != "" {
			why = fmt.Sprintf("scheme %q is not oci, oci+http or oci+https", u.Scheme)
		}
		return nil, &oci.RefError{Ref: termtext.WithoutCredentials(loc), Why: why}
	}
	n.setCredentials(o, []location{l})
	return ol.reg, nil
}

// TaggedIndex returns the index.json of the manifest tagged in c's reference, read as a
// Source reads it (its digest checked, at most repo.MaxIndexSize, each wait to ask again
// told to retrying, if not nil), believing nothing, and whether the manifest names a
// signature beside it: for a push, which must not put an
// older or unsigned index in its place. It returns nil where the tag names no manifest,
// or a pkg repository's without an index, and where the registry refuses to read the tag
// (ErrDenied): some answer 401 or 403 for a repository not made yet, and a push with a
// wrong credential is refused by its own requests. A manifest that is not a pkg
// repository's (a container image) is the error oci.ParseManifest gave it.
func TaggedIndex(ctx context.Context, c *oci.Client, retrying func(err error, wait time.Duration, attempt, max int)) (index []byte, signed bool, err error) {
	l := &ociLocation{ref: c.Ref(), n: newNetConfig(retrying), reg: c, client: &http.Client{Transport: c, CheckRedirect: checkRedirect}}
	m, err := l.taggedManifest(ctx, l.n.tries)
	if om := (*otherManifest)(nil); errors.As(err, &om) {
		return nil, false, om.err
	}
	if errors.Is(err, ErrNoRepository) || errors.Is(err, ErrDenied) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	fresh, _, err := l.indexOf(ctx, m, nil, l.n.tries)
	switch {
	case errors.Is(err, ErrNoRepository):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	_, signed = m.Layer(repo.SignatureName)
	return fresh.data, signed, nil
}
