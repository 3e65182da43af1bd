// Package testregistry is an OCI registry and its token server in the test process, on
// 127.0.0.1, as distribution 2.8 with token auth behaves (research-oci.md): enough of the
// distribution API for pkg's reads and pushes, with knobs to tamper with what it serves.
package testregistry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Registry is a registry serving the repository pkg/main and its token server. A request
// without a valid token for its scope is answered 401 with a Bearer challenge; the token
// server gives a token for the scopes asked, checking basic credentials if Users is set.
// Its fields are read and set by a test between requests, or under Mu.
type Registry struct {
	Reg   *httptest.Server
	Auth  *httptest.Server
	Users map[string]string // user: password; nil takes anyone, anonymous too
	Life  int               // expires_in of the tokens given; 0 sends none

	Mu       sync.Mutex
	Tokens   map[string]string // token: scopes granted
	n        int
	Asked    []url.Values  // each token request's query
	AuthHdr  []string      // each token request's Authorization
	Seen     []http.Header // each registry request's headers
	Blobs    map[string][]byte
	Ranges   []string // the Content-Range of each PATCH
	RangeHdr []string // the Range of each blob GET ("" for none)
	Cut      int64    // if > 0, the next blob GET of a larger blob is cut after this many bytes
	MaxBody  int64    // if > 0, a request with a larger body is answered 413, as nginx in front answers one over its client_max_body_size
	Requests []string // "METHOD PATH" of each registry request
	NoTag    int      // if > 0, the status of a GET of a tag with no manifest (404 if 0), as some registries answer 401 or 403 for a repository not made yet
	// Busy holds, by "METHOD KIND" of a request ("POST blobs", "PATCH blobs", "PUT blobs",
	// "HEAD blobs", "PUT manifests", "GET manifests"...), how many of the next such
	// requests, once authorized, are answered BusyStatus (429 Too Many Requests if 0) with
	// the Retry-After RetryAfter (none if ""), their bodies read and nothing of them taken,
	// as a rate limit, or a registry failing for now, answers.
	Busy       map[string]int
	BusyStatus int
	RetryAfter string
	Refused    []string // "METHOD PATH" of each request answered BusyStatus
	// TokenBusy is how many of the next token requests are answered BusyStatus with the
	// Retry-After RetryAfter, as a token server under load answers; each is in Asked.
	TokenBusy int

	uploads  map[string]*bytes.Buffer
	state    map[string]int // upload id: the _state its next request must carry
	manifest map[string][]byte
	mtype    map[string]string
}

// New starts a registry and its token server, stopped when the test ends.
func New(t testing.TB) *Registry {
	r := &Registry{Tokens: map[string]string{}, Blobs: map[string][]byte{}, uploads: map[string]*bytes.Buffer{},
		state: map[string]int{}, manifest: map[string][]byte{}, mtype: map[string]string{}, Life: 300}
	r.Auth = httptest.NewServer(http.HandlerFunc(r.token))
	t.Cleanup(r.Auth.Close)
	r.Reg = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Reg.Close)
	return r
}

// URL is the repository's reference: oci://127.0.0.1:PORT/pkg/main.
func (r *Registry) URL() string { return "oci://" + r.Reg.Listener.Addr().String() + "/pkg/main" }

// Digest returns the sha256 digest of b, as a registry names blobs.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Put stores the blob b and returns its digest.
func (r *Registry) Put(b []byte) string {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	d := Digest(b)
	r.Blobs[d] = bytes.Clone(b)
	return d
}

// Tag stores the manifest m, of media type mediaType, under tag.
func (r *Registry) Tag(tag, mediaType string, m []byte) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.manifest[tag], r.mtype[tag] = m, mediaType
}

// Manifest returns the manifest tagged tag, nil for none.
func (r *Registry) Manifest(tag string) []byte {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return r.manifest[tag]
}

func (r *Registry) token(w http.ResponseWriter, req *http.Request) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.Asked = append(r.Asked, req.URL.Query())
	r.AuthHdr = append(r.AuthHdr, req.Header.Get("Authorization"))
	if r.TokenBusy > 0 {
		r.TokenBusy--
		r.busy(w)
		return
	}
	if r.Users != nil {
		user, pass, ok := req.BasicAuth()
		if !ok || r.Users[user] != pass {
			http.Error(w, "bad credentials", http.StatusUnauthorized)
			return
		}
	}
	r.n++
	tok := "tok-" + strconv.Itoa(r.n)
	r.Tokens[tok] = strings.Join(req.URL.Query()["scope"], " ")
	ans := `{"token":"` + tok + `"`
	if r.Life > 0 {
		ans += `,"expires_in":` + strconv.Itoa(r.Life)
	}
	fmt.Fprint(w, ans+"}")
}

// busy answers a request BusyStatus, with the Retry-After RetryAfter.
func (r *Registry) busy(w http.ResponseWriter) {
	if r.RetryAfter != "" {
		w.Header().Set("Retry-After", r.RetryAfter)
	}
	if r.BusyStatus != 0 && r.BusyStatus != http.StatusTooManyRequests {
		http.Error(w, `{"errors":[{"code":"UNAVAILABLE","message":"try again later"}]}`, r.BusyStatus)
		return
	}
	http.Error(w, `{"errors":[{"code":"TOOMANYREQUESTS","message":"too many requests"}]}`, http.StatusTooManyRequests)
}

// Revoke forgets every token given.
func (r *Registry) Revoke() {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.Tokens = map[string]string{}
}

// TokenRequests counts the token requests so far.
func (r *Registry) TokenRequests() int {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return len(r.Asked)
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	r.Seen = append(r.Seen, req.Header.Clone())
	r.Requests = append(r.Requests, req.Method+" "+req.URL.Path)
	if r.MaxBody > 0 && req.ContentLength > r.MaxBody {
		io.Copy(io.Discard, req.Body) // the client then reads the answer, not a reset
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprint(w, "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
		return
	}
	scope := "repository:pkg/main:pull"
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		scope += ",push"
	}
	tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if granted, ok := r.Tokens[tok]; !ok || !strings.Contains(granted, scope) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="test-registry",scope="%s"`, r.Auth.URL, scope))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/v2/pkg/main/")
	kind, arg, _ := strings.Cut(rest, "/")
	if r.Busy[req.Method+" "+kind] > 0 {
		r.Busy[req.Method+" "+kind]--
		r.Refused = append(r.Refused, req.Method+" "+req.URL.Path)
		io.Copy(io.Discard, req.Body)
		r.busy(w)
		return
	}
	switch {
	case !ok:
		http.NotFound(w, req)
	case kind == "blobs" && strings.HasPrefix(arg, "uploads/"):
		r.upload(w, req, strings.TrimPrefix(arg, "uploads/"))
	case kind == "blobs":
		b, ok := r.Blobs[arg]
		if !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]}`, http.StatusNotFound)
			return
		}
		r.RangeHdr = append(r.RangeHdr, req.Header.Get("Range"))
		w.Header().Set("Docker-Content-Digest", arg)
		w.Header().Set("ETag", `"`+arg+`"`)
		if r.Cut > 0 && int64(len(b)) > r.Cut {
			cut := r.Cut
			r.Cut = 0
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.Write(b[:cut])
			panic(http.ErrAbortHandler) // the connection is closed mid-body
		}
		http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(b))
	case kind == "manifests" && req.Method == http.MethodPut:
		b, _ := io.ReadAll(req.Body)
		r.manifest[arg], r.mtype[arg] = b, req.Header.Get("Content-Type")
		w.WriteHeader(http.StatusCreated)
	case kind == "manifests":
		b, ok := r.manifest[arg]
		if !ok && r.NoTag == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="test-registry",scope="%s",error="insufficient_scope"`, r.Auth.URL, scope))
		}
		if !ok && r.NoTag > 0 {
			w.WriteHeader(r.NoTag)
			return
		}
		if !ok || !strings.Contains(req.Header.Get("Accept"), r.mtype[arg]) {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", r.mtype[arg])
		w.Write(b)
	default:
		http.NotFound(w, req)
	}
}

// upload serves POST, PATCH and PUT of an upload, each PATCH or PUT only at the Location
// the last answer gave (its _state), as distribution does.
func (r *Registry) upload(w http.ResponseWriter, req *http.Request, id string) {
	if req.Method == http.MethodPost {
		id = strconv.Itoa(len(r.uploads) + 1)
		r.uploads[id] = &bytes.Buffer{}
		r.state[id] = 1
		w.Header().Set("Location", "/v2/pkg/main/blobs/uploads/"+id+"?_state=1")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	buf, ok := r.uploads[id]
	if !ok || req.URL.Query().Get("_state") != strconv.Itoa(r.state[id]) {
		http.Error(w, "stale upload state", http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(req.Body)
	if req.Method == http.MethodPatch {
		r.Ranges = append(r.Ranges, req.Header.Get("Content-Range"))
		if want := fmt.Sprintf("%d-%d", buf.Len(), buf.Len()+len(body)-1); req.Header.Get("Content-Range") != want {
			http.Error(w, "out of order", http.StatusRequestedRangeNotSatisfiable)
			return
		}
		buf.Write(body)
		r.state[id]++
		w.Header().Set("Location", "/v2/pkg/main/blobs/uploads/"+id+"?_state="+strconv.Itoa(r.state[id]))
		w.Header().Set("Range", fmt.Sprintf("0-%d", buf.Len()-1))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	buf.Write(body)
	d := req.URL.Query().Get("digest")
	if Digest(buf.Bytes()) != d {
		http.Error(w, `{"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not match uploaded content"}]}`, http.StatusBadRequest)
		return
	}
	r.Blobs[d] = bytes.Clone(buf.Bytes())
	delete(r.uploads, id)
	w.WriteHeader(http.StatusCreated)
}
