// Package trust signs repository indexes and decides whether to believe one. It trusts
// the publisher's key, never the transport: no mirror, proxy or stale copy can make pkg
// accept an index the publisher did not sign, an older one in place of one accepted
// before, an expired one, or another repository's. It knows nothing of HTTP, caches or
// databases: callers bring the bytes and what they accepted before.
//
// Formats, version 1, each line UTF-8 text:
//
//	public key      pkg-ed25519:<base64 of the 32-byte ed25519 public key>
//	trusted key     [REPO=]<public key>, REPO being the only repository name it may sign
//	trusted-keys    trusted keys separated by spaces, commas or lines; "#" starts a
//	                comment that runs to the end of its line
//	key id          the first 8 bytes of the sha256 of the 32-byte public key, in hex
//	key file        "# pkg signing key <key id>: <public key>" (a comment), then
//	                pkg-ed25519-secret:<base64 of the 32-byte ed25519 seed>; mode 0600
//	index.json.sig  per signature, "pkg-sig 1 <key id> <base64 of the 64-byte ed25519
//	                signature of index.json's exact bytes>"; lines of a later format
//	                ("pkg-sig 2 ...") are skipped
//
// A signed index carries, inside the signed bytes, the repository's name, a version that
// grows with every signing and an expiry time (repo.Meta). Verify checks the signature
// over the raw bytes first, then that meta, then the indexes accepted before; only then
// may the caller parse the packages with repo.Parse.
package trust

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"pkg/repo"
)

// Why an index is refused; an *Error wraps one of these.
var (
	ErrUnsigned     = errors.New("trust: index not signed")
	ErrUntrusted    = errors.New("trust: index not signed by a trusted key")
	ErrBadSignature = errors.New("trust: bad signature")
	ErrMalformed    = errors.New("trust: signed index malformed")
	ErrWrongName    = errors.New("trust: index of another repository")
	ErrNotBound     = errors.New("trust: key trusted for another repository")
	ErrExpired      = errors.New("trust: index expired")
	ErrRollback     = errors.New("trust: index older than one accepted before")
	ErrReused       = errors.New("trust: index version reused for different contents")
)

// Error is an index refused: which repository, and why.
type Error struct {
	Repo string // the repository's location
	Err  error  // one of the Err values above
	// What the refusal names, where it names it: the keys whose signatures are not trusted
	// or do not match (or the key bound to another repository), the refused index's
	// version, the repository name it carries.
	KeyIDs  []string
	Version uint64
	Name    string
	msg     string
}

func (e *Error) Error() string { return "repository " + e.Repo + ": " + e.msg }

func (e *Error) Unwrap() error { return e.Err }

func refuse(repo string, kind error, format string, args ...any) *Error {
	return &Error{Repo: repo, Err: kind, msg: fmt.Sprintf(format, args...)}
}

// of sets what e names: the keys, the index's version and the repository name it carries.
func (e *Error) of(keyIDs []string, version uint64, name string) *Error {
	e.KeyIDs, e.Version, e.Name = keyIDs, version, name
	return e
}

// Policy says which indexes to believe. With no keys, any index is accepted unverified
// unless RequireSigned; with keys, every index must verify with one of them, so that
// removing a signature cannot pass for an unsigned repository.
type Policy struct {
	Keys          []PublicKey
	RequireSigned bool // refuse an index no trusted key verifies, even with no keys
	AllowExpired  bool // accept an expired index, as a copy kept for offline use
}

// With returns p trusting also keys, each once: a key whose id p already trusts for every
// repository, or for the same one, adds nothing, however many sources name it.
func (p Policy) With(keys ...PublicKey) Policy {
	p.Keys = slices.Clone(p.Keys)
	for _, k := range keys {
		if !slices.ContainsFunc(p.Keys, func(t PublicKey) bool { return t.ID() == k.ID() && (t.Repo == "" || t.Repo == k.Repo) }) {
			p.Keys = append(p.Keys, k)
		}
	}
	return p
}

// Record is an index accepted: what a later index of the repository must not roll back.
type Record struct {
	Location string // the repository's location
	Name     string
	Version  uint64
	SHA256   string // of the index's exact bytes, in hex
}

// Result is how an index passed. Unless Verified, only Location and SignedBy are set.
type Result struct {
	Record
	KeyID    string      // the trusted key that verified the index
	KeyIDs   []string    // every trusted key that verified it, KeyID first
	Keys     []PublicKey // those keys, in KeyIDs' order, as trusted
	Trusted  []string    // every key trusted to sign the repository, whether it signed this index or not
	Expires  time.Time   // when the index goes stale
	Expired  bool        // past Expires, accepted because the policy allows it
	SignedBy []string    // unverified: the key ids of a signature file nobody trusts
}

// Verified reports whether a trusted key verified the index.
func (r Result) Verified() bool { return r.KeyID != "" }

// Verify decides whether to believe index, the exact bytes of the index.json of the
// repository at location, given its index.json.sig (nil if it has none) and the indexes
// of that repository accepted before. It refuses with an *Error.
func (p Policy) Verify(location string, index, sig []byte, known ...Record) (Result, error) {
	return p.verify(location, index, sig, known, time.Now())
}

func (p Policy) verify(loc string, index, sig []byte, known []Record, now time.Time) (Result, error) {
	if len(p.Keys) == 0 {
		return p.unverified(loc, sig)
	}
	keys, err := p.signers(loc, index, sig)
	if err != nil {
		return Result{}, err
	}
	meta, err := repo.ParseMeta(index)
	if err != nil {
		return Result{}, refuse(loc, ErrMalformed, "signed index: %v", err)
	}
	if meta.Name == "" || meta.Version == 0 || meta.Expires.IsZero() {
		return Result{}, refuse(loc, ErrMalformed, "signed index lacks its name, version or expires")
	}
	keys, ids, err := bound(loc, keys, meta.Name)
	if err != nil {
		return Result{}, err
	}
	sum := sha256.Sum256(index)
	res := Result{Record: Record{Location: loc, Name: meta.Name, Version: meta.Version, SHA256: hex.EncodeToString(sum[:])},
		KeyID: ids[0], KeyIDs: ids, Keys: keys, Trusted: p.For(meta.Name), Expires: meta.Expires, Expired: now.After(meta.Expires)}
	if res.Expired && !p.AllowExpired {
		return Result{}, refuse(loc, ErrExpired, "index version %d expired at %s", meta.Version, meta.Expires.UTC().Format(time.RFC3339)).of(nil, meta.Version, meta.Name)
	}
	for _, k := range known {
		if err := res.Record.Follows(k); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// unverified accepts an index without keys to verify it, unless signatures are required.
func (p Policy) unverified(loc string, sig []byte) (Result, error) {
	res := Result{Record: Record{Location: loc}}
	if sig != nil {
		sigs, err := parseSignatures(sig)
		if err != nil && p.RequireSigned {
			return Result{}, refuse(loc, ErrBadSignature, "bad signature: %s: %v", repo.SignatureName, err)
		}
		for _, s := range sigs {
			res.SignedBy = append(res.SignedBy, s.keyID)
		}
	}
	switch {
	case !p.RequireSigned:
		return res, nil
	case sig == nil:
		return Result{}, refuse(loc, ErrUnsigned, "index is not signed (no %s), and signatures are required", repo.SignatureName)
	}
	return Result{}, refuse(loc, ErrUntrusted, "index is signed by key %s, but no key is trusted and signatures are required",
		strings.Join(res.SignedBy, ", ")).of(res.SignedBy, 0, "")
}

// signers returns the trusted keys whose signatures of index verify.
func (p Policy) signers(loc string, index, sig []byte) ([]PublicKey, error) {
	if sig == nil {
		return nil, refuse(loc, ErrUnsigned, "index is not signed (no %s), but keys are trusted (%s), and with any key trusted every repository must verify with one",
			repo.SignatureName, p.described())
	}
	sigs, err := parseSignatures(sig)
	if err != nil {
		return nil, refuse(loc, ErrBadSignature, "bad signature: %s: %v", repo.SignatureName, err)
	}
	var good []PublicKey
	var ids, bad []string
	for _, s := range sigs {
		ids = append(ids, s.keyID)
		for _, k := range p.Keys {
			switch {
			case k.ID() != s.keyID:
			case ed25519.Verify(k.key, index, s.sig):
				good = append(good, k)
			case !slices.Contains(bad, s.keyID): // a key trusted twice (bound to two names) is one
				bad = append(bad, s.keyID)
			}
		}
	}
	switch {
	case len(good) > 0:
		return good, nil
	case len(bad) > 0:
		return nil, refuse(loc, ErrBadSignature, "bad signature: the signature by key %s does not match index.json (%d bytes), so the index or its signature changed after signing",
			strings.Join(bad, ", "), len(index)).of(bad, 0, "")
	}
	return nil, refuse(loc, ErrUntrusted, "index is signed by key %s, which is not trusted (trusted: %s)",
		strings.Join(ids, ", "), strings.Join(p.ids(), ", ")).of(ids, 0, "")
}

// ids returns the ids of the trusted keys, each once (a key bound to two names is one).
func (p Policy) ids() []string {
	var ids []string
	for _, k := range p.Keys {
		if !slices.Contains(ids, k.ID()) {
			ids = append(ids, k.ID())
		}
	}
	return ids
}

// described returns the ids of the trusted keys, each once, with the repository a key is
// bound to: an unsigned index names none, so which of them it should verify with is unknown.
func (p Policy) described() string {
	var ds []string
	for _, k := range p.Keys {
		d := k.ID()
		if k.Repo != "" {
			d += " for repository " + k.Repo + " only"
		}
		if !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return strings.Join(ds, ", ")
}

// For returns the ids of the trusted keys that may sign the repository name. An index of
// name accepted from anywhere, signed by any of them, is one the repository may not roll
// back: a mirror serving an older index signed by only one of a publisher's keys (during a
// rotation, say) is the same repository.
func (p Policy) For(name string) []string {
	_, ids := p.keysFor(name)
	return ids
}

// keysFor returns the first trusted key of each id that may sign the repository name, in
// the policy's order, and their ids.
func (p Policy) keysFor(name string) (keys []PublicKey, ids []string) {
	for _, k := range p.Keys {
		if id := k.ID(); (k.Repo == "" || k.Repo == name) && !slices.Contains(ids, id) {
			keys, ids = append(keys, k), append(ids, id)
		}
	}
	return keys, ids
}

// bound returns those of signers that may sign the repository name, one per id, in
// signers' order, and their ids.
func bound(loc string, signers []PublicKey, name string) ([]PublicKey, []string, error) {
	keys, ids := Policy{Keys: signers}.keysFor(name)
	if len(ids) == 0 {
		return nil, nil, refuse(loc, ErrNotBound, "index is for repository %q, but key %s is trusted only for repository %q",
			name, signers[0].ID(), signers[0].Repo).of([]string{signers[0].ID()}, 0, name)
	}
	return keys, ids, nil
}

// Follows reports, with an *Error, why r may not replace prev, an index of the same
// location accepted before: another repository's name, a lower version, or the same
// version with other bytes.
func (r Record) Follows(prev Record) error {
	if r.Name != prev.Name {
		return refuse(r.Location, ErrWrongName, "index is for repository %q, but this location served repository %q before",
			r.Name, prev.Name).of(nil, r.Version, r.Name)
	}
	return r.NotOlder(prev)
}

// NotOlder reports, with an *Error, why r may not follow prev, an index of the same
// repository accepted before, from r's location or another (a mirror): a lower version,
// or the same version with other bytes.
func (r Record) NotOlder(prev Record) error {
	from := ""
	if prev.Location != r.Location {
		from = " from " + prev.Location
	}
	switch {
	case r.Version < prev.Version:
		return refuse(r.Location, ErrRollback, "index version %d is older than version %d, accepted before%s", r.Version, prev.Version, from).of(nil, r.Version, r.Name)
	case r.Version == prev.Version && r.SHA256 != prev.SHA256:
		return refuse(r.Location, ErrReused, "index version %d differs from the version %d accepted before%s (sha256 %.16s, was %.16s)",
			r.Version, prev.Version, from, r.SHA256, prev.SHA256).of(nil, r.Version, r.Name)
	}
	return nil
}
