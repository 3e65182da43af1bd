package txn_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pkg/fetch"
	"pkg/install"
	"pkg/repo"
	"pkg/txn"
)

// TestInstallFromMirror installs a package whose repository's first URL refuses
// connections and whose first mirror answers 503, from the second mirror, said in one
// note, with the first URL kept as the repository's.
func TestInstallFromMirror(t *testing.T) {
	w := newWorld(t)
	addPackage(t, w.repo, "hello", "1")
	good := httptest.NewServer(http.FileServer(http.Dir(w.repo)))
	t.Cleanup(good.Close)
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(busy.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/"
	l.Close()

	var notes []string
	o := fetch.Options{Mirrors: []string{busy.URL, good.URL}, Failover: func(to string, why error) {
		notes = append(notes, why.Error()+"; using "+to)
	}}
	root := openRoot(t)
	ix, err := txn.ReadIndex(context.Background(), w.cache, root.Dir(), install.Options{}, refused, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.Source.URL(); got != refused {
		t.Errorf("the source is %s, want the first URL %s", got, refused)
	}
	rs := []repo.Requirement{{Name: "hello"}}
	recs, err := root.DB().List()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := txn.NewPlan(txn.Spec{Action: txn.Install, Requires: rs, Root: root.Dir(), Records: recs, Catalog: ix, Cache: w.cache})
	if err != nil {
		t.Fatal(err)
	}
	f := &txn.Fetcher{Source: ix.Source, Jobs: 2, Cache: w.cache}
	plan.Bind(txn.Target{Root: root, Fetcher: f})
	if _, err := plan.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root.Dir(), "bin", "hello")); err != nil {
		t.Error(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], refused) || !strings.Contains(notes[0], busy.URL) || !strings.HasSuffix(notes[0], "using "+good.URL+"/") {
		t.Errorf("notes %q; want one naming both mirrors left and the one used", notes)
	}
}
