package registry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The token server's names, which the registry's configuration names too.
const (
	service = "pkg-test-registry"
	issuer  = "pkg-test-issuer"
)

// tokenServer gives the registry's tokens as distribution 2.8 takes them
// (research-oci.md §1): a compact JWS signed ES256, the signer's self-signed certificate
// in its x5c header and in the registry's rootcertbundle, aud the service as a string.
// Anonymous requests get pull; bob, with his password, what he asks for; a wrong password
// a 401.
type tokenServer struct {
	*httptest.Server
	key    *ecdsa.PrivateKey
	certPE []byte // PEM
	der    []byte
}

func newTokenServer(t *testing.T) *tokenServer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: issuer},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenServer{key: key, der: der, certPE: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	user, pass, authed := r.BasicAuth()
	if authed && (user != "bob" || pass != "s3cret") {
		http.Error(w, `{"details":"bad credentials"}`, http.StatusUnauthorized)
		return
	}
	var access []map[string]any
	for _, scope := range r.URL.Query()["scope"] {
		parts := strings.Split(scope, ":")
		if len(parts) != 3 || parts[0] != "repository" {
			continue
		}
		actions := strings.Split(parts[2], ",")
		if !authed {
			actions = []string{"pull"}
		}
		access = append(access, map[string]any{"type": "repository", "name": parts[1], "actions": actions})
	}
	now := time.Now()
	claims := map[string]any{"iss": issuer, "sub": user, "aud": service, "exp": now.Add(5 * time.Minute).Unix(),
		"nbf": now.Add(-time.Minute).Unix(), "iat": now.Unix(), "jti": fmt.Sprint(now.UnixNano()), "access": access}
	tok, err := ts.sign(claims)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"token": tok, "access_token": tok, "expires_in": 300, "issued_at": now.Format(time.RFC3339)})
}

// sign makes the JWS of claims: ES256's signature is r and s, 32 bytes each (RFC 7518
// section 3.4), not ASN.1.
func (ts *tokenServer) sign(claims map[string]any) (string, error) {
	head, err := json.Marshal(map[string]any{"alg": "ES256", "typ": "JWT", "x5c": []string{base64.StdEncoding.EncodeToString(ts.der)}})
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(head) + "." + enc.EncodeToString(body)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, ts.key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + enc.EncodeToString(sig), nil
}

// registry is docker-registry serving on 127.0.0.1 with token auth from ts; its log (the
// access log included) goes to the file log, its blobs under dir/data.
type registry struct {
	addr string
	dir  string
	log  string
	cmd  *exec.Cmd
}

// blobFile is where the registry keeps the bytes of the blob of sha256 hex.
func (r *registry) blobFile(hex string) string {
	return filepath.Join(r.dir, "data", "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
}

// startRegistry starts docker-registry with its files in dir, its challenges naming
// realm ("": ts's).
func startRegistry(t *testing.T, dir string, ts *tokenServer, realm string) *registry {
	if realm == "" {
		realm = ts.URL + "/token"
	}
	bundle := filepath.Join(dir, "token.crt")
	if err := os.WriteFile(bundle, ts.certPE, 0o644); err != nil {
		t.Fatal(err)
	}
	return serveRegistry(t, dir, fmt.Sprintf(`
  token:
    realm: %s
    service: %s
    issuer: %s
    rootcertbundle: %s
`, realm, service, issuer, bundle))
}

// startBasicRegistry starts docker-registry with its files in dir, taking the user bob
// with the password s3cret by HTTP basic authentication (htpasswd).
func startBasicRegistry(t *testing.T, dir string) *registry {
	file := filepath.Join(dir, "htpasswd")
	// bcrypt of s3cret at cost 4, made with Python's crypt.crypt and METHOD_BLOWFISH
	if err := os.WriteFile(file, []byte("bob:$2b$04$XvRzUDUjchO9TCC1GAwoMuFdQ83IB20HrF4SnX7NLM9ym15wAQ8y.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return serveRegistry(t, dir, fmt.Sprintf("\n  htpasswd: {realm: pkg-test, path: %s}\n", file))
}

// serveRegistry starts docker-registry with its files in dir and the auth section auth.
func serveRegistry(t *testing.T, dir, auth string) *registry {
	addr := freeAddr(t)
	config := fmt.Sprintf(`version: 0.1
log: {level: info, accesslog: {disabled: false}}
storage:
  filesystem: {rootdirectory: %s}
  delete: {enabled: true}
http: {addr: %s}
auth:%s`, filepath.Join(dir, "data"), addr, auth)
	conf := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &registry{addr: addr, dir: dir, log: filepath.Join(dir, "registry.log")}
	logf, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command("docker-registry", "serve", conf)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		logf.Close()
	})
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return r
			}
		}
		if i == 100 {
			b, _ := os.ReadFile(r.log)
			t.Fatalf("docker-registry did not answer on %s: %v\n%s", addr, err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logged returns the registry's log.
func (r *registry) logged(t *testing.T) string {
	b, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// freeAddr returns a 127.0.0.1 address with a free port.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// proxy forwards TCP connections to a server; armed, it cuts the first connection whose
// answers pass cut bytes, as a dropped connection would, once.
type proxy struct {
	l     net.Listener
	to    string
	cut   int64
	armed atomic.Bool
	cuts  atomic.Int32
	wg    sync.WaitGroup
}

func newProxy(t *testing.T, to string, cut int64) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, to: to, cut: cut}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		l.Close()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(c)
		}()
	}
}

func (p *proxy) forward(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.to)
	if err != nil {
		return
	}
	defer s.Close()
	go func() {
		io.Copy(s, c)
		s.Close()
	}()
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := s.Read(buf)
		if k > 0 {
			n += int64(k)
			if n > p.cut && p.armed.CompareAndSwap(true, false) {
				c.Write(buf[:k-int(n-p.cut)])
				p.cuts.Add(1)
				return
			}
			if _, werr := c.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// random returns n random bytes, which no compression shrinks.
func random(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
