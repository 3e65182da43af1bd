package fetch

import (
	"archive/tar"
	"slices"
	"testing"

	"pkg/internal/testfs"
	"pkg/repo"
	"pkg/tarutil"
)

// TestRealDebs reads Debian 12's own .debs, fetched with apt-get download, as repo add
// does: their relation fields as pkg's requirements, and their absolute symlinks into
// their own trees made relative.
func TestRealDebs(t *testing.T) {
	names := []string{"golang-1.19-go", "curl", "libcurl4", "libpython3.11-stdlib", "libpython3.11-minimal", "libc6"}
	debs := testfs.AptDownload(t, names...)
	got := map[string]Contents{}
	for i, name := range names {
		c, err := Inspect(t.Context(), debs[i])
		if err != nil {
			t.Fatal(err)
		}
		if c.Control == nil || c.Control.Package != name || c.Control.Check() != nil {
			t.Fatalf("%s: control %+v", name, c.Control)
		}
		got[name] = c
	}
	reqs := func(name string, fields ...string) []string {
		t.Helper()
		rs, err := got[name].Control.Requirements(fields...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var s []string
		for _, r := range rs {
			s = append(s, r.String())
		}
		return s
	}
	version := func(name string) string { return got[name].Control.Version }
	for _, tt := range []struct {
		name   string
		fields []string
		want   string // one of the requirements
	}{
		{"golang-1.19-go", []string{"Depends", "Pre-Depends"}, "golang-1.19-src>=" + version("golang-1.19-go")},
		{"curl", []string{"Depends", "Pre-Depends"}, "libcurl4=" + version("curl")},
		{"curl", []string{"Depends", "Pre-Depends"}, "zlib1g>=1:1.1.4"},
		{"libcurl4", []string{"Depends", "Pre-Depends"}, "libssl3>=3.0.0"},
		{"libcurl4", []string{"Conflicts", "Breaks"}, "libcurl3"},
		{"libcurl4", []string{"Replaces"}, "libcurl3"},
		{"libpython3.11-stdlib", []string{"Depends", "Pre-Depends"}, "media-types|mime-support"},
		{"libpython3.11-stdlib", []string{"Depends", "Pre-Depends"}, "libpython3.11-minimal=" + version("libpython3.11-stdlib")},
		{"libpython3.11-stdlib", []string{"Conflicts", "Breaks"}, "python3-gdbm<3.9.9-1~"},
		{"libc6", []string{"Conflicts", "Breaks"}, "busybox<1.30.1-6"},
	} {
		if rs := reqs(tt.name, tt.fields...); !slices.Contains(rs, tt.want) {
			t.Errorf("%s %v = %q, want %s among them", tt.name, tt.fields, rs, tt.want)
		}
	}
	if r, _ := repo.ParseRequirement("media-types|mime-support"); len(r.Or) != 1 {
		t.Errorf("media-types|mime-support: %+v, want one alternative after the first", r)
	}

	for name, link := range map[string][2]string{
		"libc6":                 {"lib64/ld-linux-x86-64.so.2", "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
		"libpython3.11-minimal": {"usr/lib/python3.11/sitecustomize.py", "../../../etc/python3.11/sitecustomize.py"},
	} {
		var m tarutil.Member
		if i := slices.IndexFunc(got[name].Members, func(m tarutil.Member) bool { return m.Name == link[0] }); i >= 0 {
			m = got[name].Members[i]
		}
		if m.Type != tar.TypeSymlink || m.Linkname != link[1] {
			t.Errorf("%s: %s is %+v, want a symlink to %s", name, link[0], m, link[1])
		}
	}
}
