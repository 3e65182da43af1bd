package report

import (
	"errors"
	"slices"
	"testing"

	"pkg/db"
	"pkg/install"
	"pkg/repo"
	"pkg/trust"
	"pkg/txn"
)

// TestResultText words each result by what happened to the package.
func TestResultText(t *testing.T) {
	stats := ": 3 files, 1.0 KiB (1.0 KiB cloned, 0 B copied) in 0s"
	for _, tt := range []struct {
		res           install.Result
		again, locked bool
		origin        string
		want          string
	}{
		{install.Result{Name: "t", Version: "1.0"}, false, false, "", "installed t 1.0"},
		{install.Result{Name: "t", Version: "1.0", Previous: "1.0", Again: true}, false, false, "", "reinstalled t 1.0"},
		{install.Result{Name: "t", Version: "1.0", Previous: "0.9"}, true, false, "", "reinstalled t 1.0"},
		{install.Result{Name: "t", Version: "1.0"}, true, false, "", "installed t 1.0"}, // a dependency a reinstall installs
		{install.Result{Name: "t", Version: "1.1", Previous: "1.0"}, false, false, "", "upgraded t 1.0 to 1.1"},
		{install.Result{Name: "t", Version: "1.0", Previous: "1.1"}, false, true, "", "downgraded t 1.1 to 1.0"},
		{install.Result{Name: "t", Version: "1.0", Previous: "1.0"}, false, true, "", "replaced t 1.0 with the archive the lockfile names"},
		{install.Result{Name: "t", Version: "1.0", Previous: "1.0"}, false, false, "", "replaced t 1.0 with the entry the repository now has of it"},
		{install.Result{Name: "t", Version: "1.0", Previous: "1.0"}, false, false, "/src/t-1.0.tar.gz", "replaced t 1.0 with the archive /src/t-1.0.tar.gz"},
	} {
		tt.res.Files, tt.res.Bytes, tt.res.Cloned = 3, 1024, 1024
		if got := resultText(&tt.res, tt.again, tt.locked, tt.origin); got != tt.want+stats {
			t.Errorf("resultText(%+v, %v, %v) = %q, want %q", tt.res, tt.again, tt.locked, got, tt.want+stats)
		}
	}
}

func TestCommandText(t *testing.T) {
	for _, tt := range []struct {
		ch   txn.CommandChange
		want string
	}{
		{txn.CommandChange{Name: "a", Version: "1", Gone: []string{"x"}, Added: []string{"y", "z"}}, "a 1 has command y, z in place of x"},
		{txn.CommandChange{Name: "a", Version: "1", Gone: []string{"x"}}, "a 1 no longer has command x"},
		{txn.CommandChange{Name: "a", Version: "1", Added: []string{"y"}}, "a 1 now has command y"},
	} {
		if got := commandText(tt.ch); got != tt.want {
			t.Errorf("commandText(%+v) = %q, want %q", tt.ch, got, tt.want)
		}
	}
}

func TestSalvageText(t *testing.T) {
	paths := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, tt := range []struct {
		s    install.Salvage
		want []string
	}{
		{install.Salvage{Key: "t", Version: "1", Paths: paths[:1], Dir: "/r/.pkg/saved/t"},
			[]string{"the directory of t 1 held 1 path that it did not install or that changed since: kept in /r/.pkg/saved/t: a"}},
		{install.Salvage{Key: "t", Version: "1", Paths: paths, Dir: "/s", Tree: "/r/.pkg/saved/t-tree"}, []string{
			"the directory of t 1 held 7 paths that it did not install or that changed since: kept in /s: a, b, c, d, e and 2 more",
			"the rest of the directory of t 1 held what pkg could not sort out (a part it could not read or move): kept whole in /r/.pkg/saved/t-tree"}},
		{install.Salvage{Key: "t", Version: "1", Err: errors.New("no space")}, []string{
			"the directory of t 1 held what pkg could not sort out, and could not be kept (no space): it stays under /r/.pkg for the next pkg command to keep"}},
		{install.Salvage{Key: "t", Version: "1", Paths: paths[:2], Dir: "/r/.pkg/saved/t-1-root.1", Prefix: true}, []string{
			"the root held 2 paths not pkg's where files of t 1 go or were: kept in /r/.pkg/saved/t-1-root.1: a and b"}},
		{install.Salvage{Key: "t", Version: "1", Paths: paths[:1], Dir: "/r/.pkg/saved/t-1-root.1", Prefix: true, Gone: true}, []string{
			"t 1, whose tree is gone, left 1 path in the root that pkg cannot tell from yours: kept in /r/.pkg/saved/t-1-root.1: a"}},
		// An npm instance's key holds its version: it is said once.
		{install.Salvage{Key: "ms@2.0.0", Version: "2.0.0", Kind: repo.KindNPM, Paths: paths[:1], Dir: "/r/.pkg/saved/ms-2.0.0.1"},
			[]string{"the directory of ms@2.0.0 held 1 path that it did not install or that changed since: kept in /r/.pkg/saved/ms-2.0.0.1: a"}},
		{install.Salvage{Key: "ms@2.0.0", Version: "2.0.0", Kind: repo.KindNPM, Paths: paths[:1], Dir: "/s", Prefix: true, Left: paths[1:2]}, []string{
			"the root held 1 path not pkg's where files of ms@2.0.0 go or were: kept in /s: a",
			"1 directory of ms@2.0.0 left in /r, holding what no package has: b"}},
	} {
		if got := SalvageText(tt.s, "/r"); !slices.Equal(got, tt.want) {
			t.Errorf("SalvageText(%+v) =\n%q\nwant\n%q", tt.s, got, tt.want)
		}
	}
}

func TestHeldText(t *testing.T) {
	detail := repo.Held{Package: repo.Package{Name: "t", Version: "1.0"}, Older: "0.9"}
	hold, err := repo.ParseRequirement("t@npm:4.3.9")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		h    txn.Held
		want string
	}{
		{txn.Held{Name: "t", From: "1.0", Version: "1.0", Detail: detail}, "kept t at 1.0: " + detail.Why()},
		{txn.Held{Name: "t", From: "0.5", Version: "1.0", Detail: detail}, "t goes from 0.5 to 1.0, not further: " + detail.Why()},
		{txn.Held{Name: "t", From: "1.0", Version: "1.0", HeldTo: "b", Gone: &repo.PinGoneError{Repo: "b"}},
			"kept t at 1.0: repository b, which it was asked from, is not in use"},
		{txn.Held{Name: "t", From: "1.0", Version: "1.0", HeldTo: "b", Gone: &repo.PinGoneError{Repo: "b", InUse: true}},
			"kept t at 1.0: repository b, which it was asked from, no longer offers it"},
		{txn.Held{Name: "t", From: "0.5", Version: "1.0", Newest: "2.0", HeldTo: "b"},
			"t goes from 0.5 to 1.0, not further: held to repository b, which it was asked from (newest 2.0)"},
		{txn.Held{Name: "t", From: "4.3.10", Version: "4.3.9", Newest: "4.4.0", HeldBy: "t@4.3.9",
			Detail: repo.Held{Package: repo.Package{Name: "t", Version: "4.3.9", Kind: repo.KindNPM}, Newest: "4.4.0", Hold: &hold}},
			"t goes down from 4.3.10 to 4.3.9: held by its request t@npm:4.3.9 (newest 4.4.0)"},
	} {
		if got := HeldText(tt.h); got != tt.want {
			t.Errorf("HeldText(%+v) = %q, want %q", tt.h, got, tt.want)
		}
	}
}

func TestBesideText(t *testing.T) {
	for n, want := range map[int]string{
		1: "1 npm package stays at the version its dependents' ranges allow, a newer version of its name installed beside it for other packages",
		8: "8 npm packages stay at the versions their dependents' ranges allow, newer versions of their names installed beside them for other packages",
	} {
		if got := BesideText(n); got != want {
			t.Errorf("BesideText(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTrustText(t *testing.T) {
	k, err := trust.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pub := k.Public()
	bound := pub
	bound.Repo = "demo"
	sources := []trust.KeySource{{Name: "--trusted-key", Keys: []trust.PublicKey{pub}}, {Name: "PKG_TRUSTED_KEYS"}, {Name: "/r/.pkg/trusted-keys", Keys: []trust.PublicKey{bound}}}
	pins := []db.Pin{{Location: "https://h/r/", Name: "demo", Version: 3, Keys: []string{pub.String()}}, {Location: "file:///x/", Name: "x", Version: 1}}
	want := []string{
		"key " + pub.ID() + " for any repository: " + pub.String() + " (--trusted-key)",
		"key " + pub.ID() + " for repository demo only: " + pub.String() + " (/r/.pkg/trusted-keys)",
		"pinned https://h/r/: repository demo, version 3, to key " + pub.ID(),
		"pinned file:///x/: repository x, version 1, to no key: refused until a key is trusted for it",
	}
	if got := TrustText(sources, pins); !slices.Equal(got, want) {
		t.Errorf("TrustText =\n%q\nwant\n%q", got, want)
	}
}

func TestLockCount(t *testing.T) {
	one := &repo.Lock{Packages: []repo.Package{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	some := &repo.Lock{Platforms: []string{"linux-amd64", "linux-arm64"},
		Packages: []repo.Package{{Name: "a", Platform: "linux-amd64"}, {Name: "a", Platform: "linux-arm64"}, {Name: "b"}}}
	if got := LockCount(one); got != "3 packages" {
		t.Errorf("LockCount of a lock for any platform = %q", got)
	}
	if got := LockCount(some); got != "2 packages for 2 platforms" {
		t.Errorf("LockCount of a lock for two platforms = %q", got)
	}
}
