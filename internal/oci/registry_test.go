package oci

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// testRegistry is a registry and its token server on 127.0.0.1, as distribution 2.8 with
// token auth behaves (research-oci.md): a request without a valid token for its scope is
// answered 401 with a Bearer challenge; the token server gives a token for the scopes
// asked, checking basic credentials if users is set.
type testRegistry struct {
	t     *testing.T
	reg   *httptest.Server
	auth  *httptest.Server
	users map[string]string // user: password; nil takes anyone, anonymous too
	life  int               // expires_in of the tokens given; 0 sends none

	mu       sync.Mutex
	tokens   map[string]string // token: scopes granted
	n        int
	asked    []url.Values  // each token request's query
	authHdr  []string      // each token request's Authorization
	seen     []http.Header // each registry request's headers
	blobs    map[string][]byte
	uploads  map[string]*bytes.Buffer
	state    map[string]int // upload id: the _state its next request must carry
	ranges   []string       // the Content-Range of each PATCH
	manifest map[string][]byte
	mtype    map[string]string
}

func newTestRegistry(t *testing.T) *testRegistry {
	r := &testRegistry{t: t, tokens: map[string]string{}, blobs: map[string][]byte{}, uploads: map[string]*bytes.Buffer{},
		state: map[string]int{}, manifest: map[string][]byte{}, mtype: map[string]string{}, life: 300}
	r.auth = httptest.NewServer(http.HandlerFunc(r.token))
	t.Cleanup(r.auth.Close)
	r.reg = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.reg.Close)
	return r
}

// ref is the reference of the repository pkg/main:latest there.
func (r *testRegistry) ref() Ref {
	u, _ := url.Parse("oci://" + r.reg.Listener.Addr().String() + "/pkg/main")
	ref, err := ParseRef(u)
	if err != nil {
		r.t.Fatal(err)
	}
	return ref
}

func (r *testRegistry) token(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, req.URL.Query())
	r.authHdr = append(r.authHdr, req.Header.Get("Authorization"))
	if r.users != nil {
		user, pass, ok := req.BasicAuth()
		if !ok || r.users[user] != pass {
			http.Error(w, "bad credentials", http.StatusUnauthorized)
			return
		}
	}
	r.n++
	tok := "tok-" + strconv.Itoa(r.n)
	r.tokens[tok] = strings.Join(req.URL.Query()["scope"], " ")
	ans := `{"token":"` + tok + `"`
	if r.life > 0 {
		ans += `,"expires_in":` + strconv.Itoa(r.life)
	}
	fmt.Fprint(w, ans+"}")
}

// revoke forgets every token given.
func (r *testRegistry) revoke() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens = map[string]string{}
}

func (r *testRegistry) tokenRequests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.asked)
}

func (r *testRegistry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req.Header.Clone())
	scope := "repository:pkg/main:pull"
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		scope += ",push"
	}
	tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if granted, ok := r.tokens[tok]; !ok || !strings.Contains(granted, scope) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="test-registry",scope="%s"`, r.auth.URL, scope))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/v2/pkg/main/")
	switch kind, arg, _ := strings.Cut(rest, "/"); {
	case !ok:
		http.NotFound(w, req)
	case kind == "blobs" && strings.HasPrefix(arg, "uploads/"):
		r.upload(w, req, strings.TrimPrefix(arg, "uploads/"))
	case kind == "blobs":
		b, ok := r.blobs[arg]
		if !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	case kind == "manifests" && req.Method == http.MethodPut:
		b, _ := io.ReadAll(req.Body)
		r.manifest[arg], r.mtype[arg] = b, req.Header.Get("Content-Type")
		w.WriteHeader(http.StatusCreated)
	case kind == "manifests":
		b, ok := r.manifest[arg]
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
func (r *testRegistry) upload(w http.ResponseWriter, req *http.Request, id string) {
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
		r.ranges = append(r.ranges, req.Header.Get("Content-Range"))
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
	r.blobs[d] = bytes.Clone(buf.Bytes())
	delete(r.uploads, id)
	w.WriteHeader(http.StatusCreated)
}
