package publish

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pkg/fetch"
	"pkg/internal/oci"
	"pkg/pkgtest/testregistry"
	"pkg/pkgtest/testrepo"
	"pkg/trust"
)

// TestPush: a signed repository pushed to a registry reads back as the same signed index
// whose archives fetch; pushing again sends no blob, and after an add only the new ones.
func TestPush(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"}, [2]string{"tool", "2.0"})
	reg := testregistry.New(t)
	ctx := context.Background()
	var sent []string
	res, err := Push(ctx, r.Dir, reg.URL(), PushOptions{Chunk: 1000, Sent: func(what string, _ int64) { sent = append(sent, filepath.Base(what)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 5 || sent[1] != "index.json" || sent[2] != "index.json.sig" {
		t.Errorf("Sent was told %q, want the config, index.json, index.json.sig and the archives", sent)
	}
	// The config, the index, its signature and two archives.
	if res.Uploaded != 5 || res.Present != 0 || res.Ref != reg.URL()+":latest/" || !oci.ValidDigest(res.Manifest) {
		t.Errorf("first push: %+v", res)
	}
	if len(reg.Ranges) == 0 {
		t.Error("no blob went in chunks of 1000 bytes")
	}
	ix := readBack(t, reg.URL(), r.Key)
	if len(ix) != 2 {
		t.Errorf("read back %d packages, want 2", len(ix))
	}

	if res, err = Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil || res.Uploaded != 0 || res.Present != 5 {
		t.Errorf("second push: %+v, %v; want nothing uploaded", res, err)
	}
	os.Remove(filepath.Join(r.Dir, "index.json.sig")) // signed again below
	if _, err := testrepo.Publish(r.Dir, t.TempDir(), "extra", "1.0"); err != nil {
		t.Fatal(err)
	}
	r.Sign(time.Hour, "")
	if res, err = Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil || res.Uploaded != 3 || res.Present != 3 {
		t.Errorf("push after an add: %+v, %v; want the index, its signature and the new archive", res, err)
	}
	if ix := readBack(t, reg.URL(), r.Key); len(ix) != 3 {
		t.Errorf("read back %d packages, want 3", len(ix))
	}
}

// readBack reads the index pushed to url, trusting key, fetches every archive it names
// and returns their names.
func readBack(t *testing.T, url string, key trust.PrivateKey) []string {
	t.Helper()
	s, err := fetch.NewSource(url, fetch.Options{Trust: trust.Policy{Keys: []trust.PublicKey{key.Public()}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := fetch.OpenCache(context.Background(), filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ix, res, err := c.VerifiedIndex(context.Background(), s)
	if err != nil || !res.Verified() {
		t.Fatalf("read back: %+v, %v", res, err)
	}
	var names []string
	for _, p := range ix.Packages {
		if _, err := c.Fetch(context.Background(), s, p, nil); err != nil {
			t.Fatalf("fetch %s: %v", p.Name, err)
		}
		names = append(names, p.Name)
	}
	return names
}

// TestPushRefused: an archive that is not the one its entry names (changed since it was
// added) is refused by the registry; the push says so as ErrArchiveChanged, naming the
// file, its digest and the registry, and no manifest is tagged.
func TestPushRefused(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	reg := testregistry.New(t)
	matches, _ := filepath.Glob(filepath.Join(r.Dir, "hello*"))
	if len(matches) != 1 {
		t.Fatalf("archives %v", matches)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := os.WriteFile(matches[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Push(context.Background(), r.Dir, reg.URL(), PushOptions{})
	if pe := (*PushError)(nil); !errors.Is(err, ErrArchiveChanged) || !errors.As(err, &pe) || pe.What != matches[0] || !strings.Contains(err.Error(), "pkg/main") {
		t.Errorf("push of an altered archive: %v, want ErrArchiveChanged in a *PushError naming %s and the registry", err, matches[0])
	}
	if reg.Manifest("latest") != nil {
		t.Error("a manifest was tagged")
	}
}

// TestPushBadTarget pushes to what is not a registry reference: refused before any
// request, as an oci.RefError naming the target as given, without its password.
func TestPushBadTarget(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	for _, target := range []string{"oci://host", "http://127.0.0.1:5000/ns/repo", "https://u:secret@host/ns/repo", r.Dir} {
		_, err := Push(context.Background(), r.Dir, target, PushOptions{})
		want := strings.Replace(target, "u:secret@", "", 1)
		if re := (*oci.RefError)(nil); !errors.Is(err, oci.ErrRef) || !errors.As(err, &re) || re.Ref != want || strings.Contains(err.Error(), "secret") || strings.Count(err.Error(), want) != 1 {
			t.Errorf("push to %s: %v, want an oci.RefError naming %s once", target, err, want)
		}
	}
}

// TestPushOlder: an index older than the one the tag names is refused before anything is
// sent, naming both versions, and the tag keeps the newer; --force (Force) pushes it.
func TestPushOlder(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	reg := testregistry.New(t)
	ctx := context.Background()
	index, sig := r.Files()
	r.Sign(time.Hour, "")
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil {
		t.Fatal(err)
	}
	tagged := reg.Manifest("latest")
	r.Put(index, sig)
	sent := 0
	_, err := Push(ctx, r.Dir, reg.URL(), PushOptions{Sent: func(string, int64) { sent++ }})
	if oe := (*OlderError)(nil); !errors.As(err, &oe) || oe.Version != 1 || oe.Tagged != 2 {
		t.Errorf("push of version 1 over 2: %v, want an *OlderError naming both", err)
	}
	if sent != 0 || !bytes.Equal(reg.Manifest("latest"), tagged) {
		t.Errorf("%d blobs sent, the tag moved: %t; want none, and the tag kept", sent, !bytes.Equal(reg.Manifest("latest"), tagged))
	}
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{Force: true}); err != nil || bytes.Equal(reg.Manifest("latest"), tagged) {
		t.Errorf("forced push of version 1 over 2: %v; want the tag moved", err)
	}
}

// TestPushReused: an index of the version the tag names but of other bytes is refused, as
// every client that accepted the tagged one would refuse it; the same bytes pass.
func TestPushReused(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	reg := testregistry.New(t)
	ctx := context.Background()
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil {
		t.Errorf("push of the same index again: %v", err)
	}
	tagged := reg.Manifest("latest")
	index, _ := r.Files()
	r.SignWith(bytes.Replace(index, []byte(`"main"`), []byte(`"main" `), 1), r.Key)
	_, err := Push(ctx, r.Dir, reg.URL(), PushOptions{})
	if oe := (*OlderError)(nil); !errors.As(err, &oe) || oe.Version != 1 || oe.Tagged != 1 || !bytes.Equal(reg.Manifest("latest"), tagged) {
		t.Errorf("push of other bytes as version 1: %v, want an *OlderError naming version 1, and the tag kept", err)
	}
}

// TestPushOtherRepository: an index of another repository than the one the tag names is
// refused before anything is sent, naming both, whatever its version, as every client of
// that repository would refuse it (a mistyped reference); Force pushes it.
func TestPushOtherRepository(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	other := testrepo.NewSigned(t, "other", [2]string{"tool", "1.0"})
	reg := testregistry.New(t)
	ctx := context.Background()
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil {
		t.Fatal(err)
	}
	tagged := reg.Manifest("latest")
	other.Sign(time.Hour, "") // version 2, above main's 1
	sent := 0
	_, err := Push(ctx, other.Dir, reg.URL(), PushOptions{Sent: func(string, int64) { sent++ }})
	if re := (*RepositoryError)(nil); !errors.As(err, &re) || re.Name != "other" || re.Tagged != "main" {
		t.Errorf("push of repository other over main: %v; want a *RepositoryError naming both", err)
	}
	if sent != 0 || !bytes.Equal(reg.Manifest("latest"), tagged) {
		t.Errorf("%d blobs sent, the tag moved: %t; want none, and the tag kept", sent, !bytes.Equal(reg.Manifest("latest"), tagged))
	}
	if _, err := Push(ctx, other.Dir, reg.URL(), PushOptions{Force: true}); err != nil || bytes.Equal(reg.Manifest("latest"), tagged) {
		t.Errorf("forced push of repository other over main: %v; want the tag moved", err)
	}
}

// TestPushUnsigned: an unsigned index where the tag names a signed one (a checkout without
// index.json.sig) is refused before anything is sent, whatever its version, as every client
// that accepted the signed one would refuse it; Force pushes it, and an unsigned index
// over an unsigned one passes.
func TestPushUnsigned(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	reg := testregistry.New(t)
	ctx := context.Background()
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil {
		t.Fatal(err)
	}
	tagged := reg.Manifest("latest")
	if err := os.Remove(filepath.Join(r.Dir, "index.json.sig")); err != nil {
		t.Fatal(err)
	}
	sent := 0
	_, err := Push(ctx, r.Dir, reg.URL(), PushOptions{Sent: func(string, int64) { sent++ }})
	if se := (*SignatureError)(nil); !errors.As(err, &se) || se.Ref != reg.URL()+":latest/" {
		t.Errorf("push of the same index without its signature: %v, want a *SignatureError", err)
	}
	if sent != 0 || !bytes.Equal(reg.Manifest("latest"), tagged) {
		t.Errorf("%d blobs sent, the tag moved: %t; want none, and the tag kept", sent, !bytes.Equal(reg.Manifest("latest"), tagged))
	}
	if _, err := testrepo.Publish(r.Dir, t.TempDir(), "extra", "1.0"); err != nil {
		t.Fatal(err)
	}
	r.Sign(time.Hour, "") // version 2, its signature left out below
	if err := os.Remove(filepath.Join(r.Dir, "index.json.sig")); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{}); !errors.As(err, new(*SignatureError)) {
		t.Errorf("push of a newer unsigned index over a signed one: %v, want a *SignatureError", err)
	}
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{Force: true}); err != nil || bytes.Equal(reg.Manifest("latest"), tagged) {
		t.Errorf("forced push of an unsigned index over a signed one: %v; want the tag moved", err)
	}
	if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{}); err != nil {
		t.Errorf("push of the unsigned index again: %v", err)
	}
}

// TestPushNoIndex: a directory without index.json (a path mistyped, a repository not made
// yet) is refused as ErrNoIndex before anything is sent.
func TestPushNoIndex(t *testing.T) {
	reg := testregistry.New(t)
	dir := t.TempDir()
	_, err := Push(context.Background(), dir, reg.URL(), PushOptions{})
	if !errors.Is(err, ErrNoIndex) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Errorf("push of a directory without index.json: %v; want ErrNoIndex naming %s", err, dir)
	}
	if len(reg.Requests) != 0 {
		t.Errorf("the registry was asked %q", reg.Requests)
	}
}

// TestPushFirstDenied: a registry that answers 401 or 403 for the tag of a repository not
// made yet takes a first push all the same.
func TestPushFirstDenied(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		reg := testregistry.New(t)
		reg.NoTag = code
		if _, err := Push(context.Background(), r.Dir, reg.URL(), PushOptions{}); err != nil || reg.Manifest("latest") == nil {
			t.Errorf("first push to a registry answering %d for the tag: %v, want it tagged", code, err)
		}
	}
}

// TestPushOversizedSignature: a signature over trust.MaxSignatureSize is refused before
// anything is sent, naming the file.
func TestPushOversizedSignature(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	reg := testregistry.New(t)
	sig := filepath.Join(r.Dir, "index.json.sig")
	if err := os.WriteFile(sig, make([]byte, trust.MaxSignatureSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Push(context.Background(), r.Dir, reg.URL(), PushOptions{})
	if err == nil || !strings.Contains(err.Error(), sig) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("push of an oversized signature: %v, want an error naming %s and its limit", err, sig)
	}
	if reg.Manifest("latest") != nil {
		t.Error("a manifest was tagged")
	}
}

// TestPushTooLarge: a registry that refuses a blob's body as too large (413) stops the push
// with ErrTooLarge in a *PushError naming the blob, its size and the chunk size; pushing
// again in chunks under the limit sends it.
func TestPushTooLarge(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	reg := testregistry.New(t)
	reg.MaxBody = 1500 // under the archive's 2 KiB, over the manifest
	_, err := Push(context.Background(), r.Dir, reg.URL(), PushOptions{})
	var pe *PushError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &pe) || pe.Chunk != DefaultChunk || pe.Size <= reg.MaxBody || !strings.Contains(err.Error(), pe.What) {
		t.Fatalf("push through a body limit of 1500 bytes: %v, want ErrTooLarge in a *PushError of a blob over 1500 bytes, chunk %d", err, DefaultChunk)
	}
	if reg.Manifest("latest") != nil {
		t.Error("a manifest was tagged")
	}
	if _, err := Push(context.Background(), r.Dir, reg.URL(), PushOptions{Chunk: 1000}); err != nil {
		t.Errorf("push in chunks of 1000 bytes: %v", err)
	}
}

// TestPushDenied: a registry that refuses the credentials, or their absence, stops the
// push with a *fetch.DeniedError saying what was sent, as an install's says: the
// repository's own credential and where it came from, or the URL's user information, or
// neither, with the variables one is looked for in.
func TestPushDenied(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	reg := testregistry.New(t)
	reg.Users = map[string]string{"bob": "s3cret"}
	vars := []string{"PKG_REPO_MAIN_"}
	const from = "PKG_REPO_MAIN_USERNAME and PKG_REPO_MAIN_PASSWORD"
	withUser := strings.Replace(reg.URL(), "oci://", "oci://bob:WRONG@", 1)
	for _, tc := range []struct {
		name, target string
		o            PushOptions
		want         fetch.DeniedError
	}{
		{"none", reg.URL(), PushOptions{CredentialVars: vars}, fetch.DeniedError{Vars: vars}},
		{"variables", reg.URL(), PushOptions{Username: "bob", Password: "WRONG", CredentialFrom: from, CredentialVars: vars}, fetch.DeniedError{Credential: from, Vars: vars}},
		{"URL", withUser, PushOptions{CredentialVars: vars}, fetch.DeniedError{URL: true, Vars: vars}},
	} {
		_, err := Push(context.Background(), r.Dir, tc.target, tc.o)
		de := (*fetch.DeniedError)(nil)
		if !errors.As(err, &de) || de.Credential != tc.want.Credential || de.URL != tc.want.URL || !slices.Equal(de.Vars, tc.want.Vars) {
			t.Errorf("%s: %v (%+v), want a *fetch.DeniedError %+v", tc.name, err, de, tc.want)
		} else if strings.Contains(err.Error(), "WRONG") || strings.Contains(err.Error(), "bob") {
			t.Errorf("%s: %q shows the credential", tc.name, err)
		}
	}
	if reg.Manifest("latest") != nil {
		t.Error("a manifest was tagged")
	}
	if _, err := Push(context.Background(), r.Dir, reg.URL(), PushOptions{Username: "bob", Password: "s3cret"}); err != nil {
		t.Errorf("push with the right credentials: %v", err)
	}
}

// TestPushExternalWithoutUser: an archive URL an index holds, which an older pkg may have
// recorded with a token, is reported without its user information.
func TestPushExternalWithoutUser(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	index, _ := r.Files()
	for _, archive := range []string{"https://user:t0ken@cdn.example/hello.tar", "https://t0ken@cdn.example/hello.tar"} {
		r.Put(bytes.Replace(index, []byte(`"hello-1.0.tar"`), []byte(`"`+archive+`"`), 1), nil)
		var res Pushed
		if _, err := pushBlobs(r.Dir, &res); err != nil {
			t.Fatal(err)
		}
		if want := []string{"https://cdn.example/hello.tar"}; !slices.Equal(res.External, want) {
			t.Errorf("External = %q, want %q", res.External, want)
		}
	}
}

// TestPushOverOther: a tag naming a manifest that is not a pkg repository's (a container
// image, OCI's or Docker's) is refused before anything is sent, as a *TagError, and keeps
// it; Force replaces it.
func TestPushOverOther(t *testing.T) {
	r := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	ctx := context.Background()
	for _, mediaType := range []string{oci.MediaTypeManifest, "application/vnd.docker.distribution.manifest.v2+json"} {
		reg := testregistry.New(t)
		config := reg.Put([]byte(`{"architecture":"amd64","os":"linux"}`))
		image := []byte(`{"schemaVersion":2,"mediaType":"` + mediaType + `","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"` + config + `","size":37},"layers":[]}`)
		reg.Tag("latest", mediaType, image)
		sent := 0
		_, err := Push(ctx, r.Dir, reg.URL(), PushOptions{Sent: func(string, int64) { sent++ }})
		if te := (*TagError)(nil); !errors.As(err, &te) || !errors.Is(err, oci.ErrManifest) || sent != 0 || !bytes.Equal(reg.Manifest("latest"), image) {
			t.Errorf("push over a %s: %v, %d blobs sent; want a *TagError, nothing sent and the image kept", mediaType, err, sent)
		}
		if _, err := Push(ctx, r.Dir, reg.URL(), PushOptions{Force: true}); err != nil || bytes.Equal(reg.Manifest("latest"), image) {
			t.Errorf("forced push over a %s: %v; want the tag moved", mediaType, err)
		}
	}
}

// TestPushNamedOverUnnamed pushes a repository's index over the tag of an index that names
// no repository: clients that accepted that one refuse a named one in its place
// (trust.Record.Follows compares the names strictly), and so does the push.
func TestPushNamedOverUnnamed(t *testing.T) {
	unnamed := filepath.Join(t.TempDir(), "unnamed")
	if _, err := testrepo.Publish(unnamed, t.TempDir(), "tool", "1.0"); err != nil {
		t.Fatal(err)
	}
	reg := testregistry.New(t)
	ctx := context.Background()
	if _, err := Push(ctx, unnamed, reg.URL(), PushOptions{}); err != nil {
		t.Fatal(err)
	}
	named := testrepo.NewSigned(t, "main", [2]string{"hello", "1.0"})
	named.Sign(time.Hour, "") // version 2
	if _, err := Push(ctx, named.Dir, reg.URL(), PushOptions{}); !errors.As(err, new(*RepositoryError)) {
		t.Errorf("push of repository main over an unnamed one: %v; want a *RepositoryError", err)
	}
}
