package realworld

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCurl installs curl, published with no flags beside its closure (libcurl4 and the
// libraries it needs): curl runs on the root's libraries with the host's libcurl, libssl
// and libnghttp2 hidden, and reports their versions (must-show 3 of #32).
func TestCurl(t *testing.T) {
	w := newWorld(t, "curl")
	w.pkg("install", "curl")
	w.checkInstalled(w.published())
	w.verify()
	w.checkShared("libcurl4", "libssl3", "libnghttp2-14")

	hide := hostLibs(t, "libcurl.so.4", "libssl.so.3", "libnghttp2.so.14")
	w.checkHidden(hide, "/usr/bin/curl", "--version")
	out := output(t, w.hidden(hide, filepath.Join(w.root, "bin/curl"), "--version"))
	for _, want := range []string{
		"curl " + upstream(w.debs["curl"].Version) + " ",
		" libcurl/" + upstream(w.debs["libcurl4"].Version) + " ",
		" OpenSSL/" + upstream(w.debs["libssl3"].Version) + " ",
		" nghttp2/" + upstream(w.debs["libnghttp2-14"].Version),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("curl --version lacks %q:\n%s", want, out)
		}
	}
}
