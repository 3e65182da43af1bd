// Package oci speaks the OCI distribution protocol to one repository of a registry: the
// references pkg takes (oci://HOST[:PORT]/NAME[:TAG]), the registry's token
// authentication as an http.RoundTripper (challenges, a token cache per scope, the realm
// checks), the artifact manifest that holds a pkg repository, and the uploads of a push.
// It downloads nothing itself: a caller sends its GET requests through Client, which
// authorizes them. It knows no index, signature or cache.
package oci

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// The schemes of a reference. oci is https, but for a registry on a loopback host, which
// is plain http as docker treats localhost; oci+http and oci+https say which.
const (
	Scheme      = "oci"
	SchemeHTTP  = "oci+http"
	SchemeHTTPS = "oci+https"
)

// DefaultTag is the tag of a reference that names none.
const DefaultTag = "latest"

// Ref names a repository of a registry, and the tag of the manifest that holds pkg's
// repository there.
type Ref struct {
	Scheme string // the reference's: oci, oci+http or oci+https
	Host   string // host[:port]
	Name   string // the repository: namespace/repo
	Tag    string
}

// The grammar of names, tags and digests of any algorithm (distribution-spec, "Pulling
// manifests"), compiled on first use: every pkg command would pay for them at start.
var (
	nameRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`)
	})
	tagRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`) })
	anyDigest = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+([+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`) })
)

// maxName bounds a repository name: the spec leaves it to registries, most take 255 bytes.
const maxName = 255

// ErrRef is what the error for a reference pkg cannot read is.
var ErrRef = errors.New("oci: bad reference")

// RefError is a reference pkg cannot read (ErrRef): Ref as given, without its user
// information, and why.
type RefError struct {
	Ref string
	Why string
}

func (e *RefError) Error() string {
	return "registry reference " + e.Ref + ": " + e.Why + "; want oci://HOST[:PORT]/NAMESPACE/REPO[:TAG]"
}

func (e *RefError) Is(target error) bool { return target == ErrRef }

// ErrDigestRef is, with ErrRef, what the error for a reference by digest
// (NAME@sha256:...) is: a repository is read by its tag, whose manifest names the index.
var ErrDigestRef = errors.New("oci: reference by digest")

// digestRefError refuses a reference by digest, saying how to name a tag instead.
type digestRefError struct{ digest, tagged string }

func (e *digestRefError) Error() string {
	return "bad reference: a reference by digest (@" + e.digest + ") is not supported: pkg reads a repository by its tag; name one (" + e.tagged + ")"
}

func (e *digestRefError) Is(target error) bool { return target == ErrRef || target == ErrDigestRef }

// ByDigest reports whether u is a reference by digest, oci://HOST/NAME[:TAG]@DIGEST,
// which ParseRef refuses as such: what follows the last "@" of its path is no host, so
// the text before it is no user information.
func ByDigest(u *url.URL) bool {
	_, d, ok := cutDigest(u.Path)
	return ok && (u.Scheme == Scheme || u.Scheme == SchemeHTTP || u.Scheme == SchemeHTTPS) && anyDigest().MatchString(d)
}

// cutDigest cuts path, without its trailing slash, at its last "@".
func cutDigest(path string) (name, digest string, ok bool) {
	path = strings.TrimSuffix(path, "/")
	i := strings.LastIndexByte(path, '@')
	if i < 0 {
		return path, "", false
	}
	return path[:i], path[i+1:], true
}

// ParseRef reads u, an oci, oci+http or oci+https URL naming a repository and an optional
// tag: oci://HOST[:PORT]/NAMESPACE/REPO[:TAG], with or without a trailing slash. Its
// user information is not part of the reference.
func ParseRef(u *url.URL) (Ref, error) {
	r := Ref{Scheme: u.Scheme, Host: u.Host, Tag: DefaultTag}
	path := strings.TrimSuffix(strings.TrimPrefix(u.Path, "/"), "/")
	if name, d, _ := cutDigest(path); ByDigest(u) {
		if strings.LastIndexByte(name, ':') <= strings.LastIndexByte(name, '/') {
			name += ":TAG" // no tag before the digest
		}
		return Ref{}, &digestRefError{digest: d, tagged: u.Scheme + "://" + u.Host + "/" + name}
	}
	if i := strings.LastIndex(path, ":"); i > strings.LastIndex(path, "/") {
		path, r.Tag = path[:i], path[i+1:]
	}
	r.Name = path
	var why string
	switch {
	case u.Scheme != Scheme && u.Scheme != SchemeHTTP && u.Scheme != SchemeHTTPS:
		why = fmt.Sprintf("scheme %q is not oci, oci+http or oci+https", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		why = "no registry host"
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		why = "a query or fragment is not part of a repository"
	case path == "":
		why = "no repository name after the host"
	case len(path) > maxName || !nameRE().MatchString(path):
		why = fmt.Sprintf("repository name %q is not lowercase letters and digits separated by '.', '_', '-' and '/'", path)
	case !tagRE().MatchString(r.Tag):
		why = fmt.Sprintf("tag %q is not letters, digits, '.', '_' and '-', at most 128", r.Tag)
	}
	if why != "" {
		given := *u
		given.User = nil
		return Ref{}, &RefError{Ref: given.String(), Why: why}
	}
	return r, nil
}

// String returns the reference as a URL ending in a slash, which a repository location
// is known by, without credentials.
func (r Ref) String() string { return r.Scheme + "://" + r.Host + "/" + r.Name + ":" + r.Tag + "/" }

// HTTPScheme is the scheme the registry is spoken to in.
func (r Ref) HTTPScheme() string {
	switch {
	case r.Scheme == SchemeHTTP:
		return "http"
	case r.Scheme == Scheme && loopbackHost(r.Host):
		return "http"
	}
	return "https"
}

// base returns the URL of the registry's API root, /v2/.
func (r Ref) base() *url.URL { return &url.URL{Scheme: r.HTTPScheme(), Host: r.Host, Path: "/v2/"} }

// ManifestURL is the URL of the manifest tagged or with digest ref.
func (r Ref) ManifestURL(ref string) *url.URL {
	return r.base().JoinPath(r.Name, "manifests", ref)
}

// BlobURL is the URL of the blob with digest d.
func (r Ref) BlobURL(d string) *url.URL { return r.base().JoinPath(r.Name, "blobs", d) }

// Registry names the registry and repository in messages: HOST/NAME.
func (r Ref) Registry() string { return r.Host + "/" + r.Name }

// loopbackHost reports whether host[:port] names this machine by a loopback address or
// localhost (RFC 6761), without a lookup.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
