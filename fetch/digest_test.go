package fetch

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pkg/internal/oci"
)

// TestDigestMirror fetches an archive whose index names a host that serves nothing, from a
// by-digest mirror (a server, and a directory), and one the mirror lacks or cannot serve
// from the index's URL.
func TestDigestMirror(t *testing.T) {
	archive, p := testArchive(t)
	key := digestPath(p.SHA256)
	dead := "http://127.0.0.1:1/pool/" + p.Archive

	t.Run("server", func(t *testing.T) {
		m := newMirrorServer(t, map[string][]byte{key: archive})
		pub := p
		pub.Archive = dead
		s, err := NewSource(t.TempDir(), Options{DigestMirrors: []string{m.URL + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		c := openCache(t)
		if err := fetchOne(c, s, pub); err != nil {
			t.Fatal(err)
		}
		checkEntry(t, c, p, testFiles())
		if m.count(key) != 1 {
			t.Errorf("%d requests for %s, want 1", m.count(key), key)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "sha256"), 0o755)
		os.WriteFile(filepath.Join(dir, key), archive, 0o644)
		pub := p
		pub.Archive = dead
		s, err := NewSource(t.TempDir(), Options{DigestMirrors: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}
		if err := fetchOne(openCache(t), s, pub); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name   string
		status int  // the mirror's answer
		told   bool // the failover is said
	}{
		{"lacks it", http.StatusNotFound, false},
		{"fails", http.StatusServiceUnavailable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirrorServer(t, nil)
			m.answer(tc.status)
			up := newMirrorServer(t, map[string][]byte{p.Archive: archive})
			var told []string
			var mu sync.Mutex
			s, err := NewSource(up.URL+"/", Options{DigestMirrors: []string{m.URL + "/", "http://127.0.0.1:1/"}, Failover: func(to string, why error) {
				mu.Lock()
				defer mu.Unlock()
				told = append(told, to)
			}})
			if err != nil {
				t.Fatal(err)
			}
			s.backoff = 0
			c := openCache(t)
			if err := fetchOne(c, s, p); err != nil {
				t.Fatal(err)
			}
			if m.count(key) != 1 || up.count(p.Archive) != 1 {
				t.Errorf("requests: %d to the mirror, %d to the repository; want 1 and 1", m.count(key), up.count(p.Archive))
			}
			want := []string{"http://127.0.0.1:1/sha256/" + p.SHA256, up.URL + "/" + p.Archive}
			if !tc.told {
				want = want[1:]
			}
			if len(told) != len(want) || len(told) > 0 && told[len(told)-1] != want[len(want)-1] {
				t.Errorf("failovers said to %q, want %q", told, want)
			}
			// Again, into another cache: a mirror that lacked the archive is asked again,
			// one that failed is not, and nothing more is said.
			if err := fetchOne(openCache(t), s, p); err != nil {
				t.Fatal(err)
			}
			asked := 2
			if tc.told {
				asked = 1
			}
			if m.count(key) != asked || len(told) != len(want) {
				t.Errorf("the second fetch asked the mirror %d times in all (want %d), and said %q", m.count(key), asked, told)
			}
		})
	}
}

// TestDigestMirrorCut cuts the mirror's body half way: the rest comes from the index's
// URL by a Range request, and the archive is whole.
func TestDigestMirrorCut(t *testing.T) {
	archive, p := testArchive(t)
	half := len(archive) / 2
	m := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
		w.Write(archive[:half])
		panic(http.ErrAbortHandler)
	})
	var ranges []string
	var mu sync.Mutex
	up := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range"))
		mu.Unlock()
		serveArchive(w, r, archive)
	})
	s, err := NewSource(up.URL+"/", Options{DigestMirrors: []string{m.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if len(ranges) != 1 || ranges[0] == "" {
		t.Errorf("the repository was asked with Range %q, want one request for the rest", ranges)
	}
}

// TestDigestMirrorTampered serves other bytes from the mirror: they are refused, said in
// a note naming it, and the archive comes from where the index names it; where that lacks
// it, the error names both, and the cache is left as it was.
func TestDigestMirrorTampered(t *testing.T) {
	archive, p := testArchive(t)
	bad := append([]byte(nil), archive...)
	bad[len(bad)/2] ^= 1
	m := newMirrorServer(t, map[string][]byte{digestPath(p.SHA256): bad})
	up := newMirrorServer(t, map[string][]byte{p.Archive: archive})
	var n notes
	s, err := NewSource(up.URL+"/", Options{DigestMirrors: []string{m.URL}, Failover: n.failover})
	if err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	if err := fetchOne(c, s, p); err != nil {
		t.Fatalf("a tampered archive at the mirror, the index's at its URL: %v", err)
	}
	checkEntry(t, c, p, testFiles())
	if m.count(digestPath(p.SHA256)) != 1 || up.count(p.Archive) != 1 {
		t.Errorf("requests: %d to the mirror, %d to the repository; want 1 and 1", m.count(digestPath(p.SHA256)), up.count(p.Archive))
	}
	if n.len() != 1 || !errors.Is(n.why[0], ErrMismatch) || !slices.Equal(mirrorsOf(n.why[0]), []string{m.URL + "/"}) || n.to[0] != up.URL+"/"+p.Archive {
		t.Errorf("notes %v to %q; want one of the mirror's bytes refused", n.why, n.to)
	}

	s, err = NewSource(t.TempDir(), Options{DigestMirrors: []string{m.URL}})
	if err != nil {
		t.Fatal(err)
	}
	c = openCache(t)
	err = fetchOne(c, s, p)
	if !errors.Is(err, ErrGone) || !errors.Is(mirrorErr(err, m.URL+"/"), ErrMismatch) {
		t.Fatalf("a tampered archive at the mirror, none at its URL: %v; want the mirror's refused and the repository's missing", err)
	}
	checkEmpty(t, c)
}

// TestDigestMirrorMissing asks a by-digest mirror in a directory that does not exist (a
// path mistyped, a disk not mounted): the archive comes from the index's URL, and the
// mirror is said once, not on every archive.
func TestDigestMirrorMissing(t *testing.T) {
	archive, p := testArchive(t)
	up := newMirrorServer(t, map[string][]byte{p.Archive: archive})
	dir := filepath.Join(t.TempDir(), "unmounted")
	var n notes
	s, err := NewSource(up.URL+"/", Options{DigestMirrors: []string{dir}, Failover: n.failover})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := fetchOne(openCache(t), s, p); err != nil {
			t.Fatal(err)
		}
	}
	var me *missingError
	if n.len() != 1 || !errors.As(n.why[0], &me) || !slices.Equal(mirrorsOf(n.why[0]), []string{fileURL(dir + "/")}) {
		t.Errorf("notes %v; want one naming the missing %s", n.why, dir)
	}
}

// TestDigestMirrorRefusedLocation refuses a by-digest mirror pkg cannot read, naming it as
// one, not as the repository; a repository that is a bad registry reference is refused by
// the reference error alone, which names it.
func TestDigestMirrorRefusedLocation(t *testing.T) {
	_, err := NewSource(t.TempDir(), Options{DigestMirrors: []string{"ftp://x/"}})
	le, se := (*locationError)(nil), (*schemeError)(nil)
	if !errors.As(err, &le) || le.loc != "ftp://x/" || le.what != digestMirror || !errors.As(err, &se) {
		t.Errorf("NewSource: %v; want an error naming the by-digest mirror", err)
	}
	_, err = NewSource(t.TempDir(), Options{DigestMirrors: []string{"oci://x/"}})
	if re := (*oci.RefError)(nil); !errors.As(err, &le) || le.loc != "oci://x/" || le.what != digestMirror || !errors.As(err, &re) || strings.Count(err.Error(), "oci://x/") != 1 {
		t.Errorf("NewSource: %v; want a bad reference naming the by-digest mirror once", err)
	}
	_, err = NewSource("oci://x/", Options{})
	if re := (*oci.RefError)(nil); !errors.As(err, &le) || le.what != "" || !errors.As(err, &re) || err.Error() != re.Error() || strings.Count(err.Error(), "oci://x/") != 1 {
		t.Errorf("NewSource: %v; want the bad reference alone, naming it once", err)
	}
}
