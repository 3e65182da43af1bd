// Package realworld installs real Debian packages with the pkg binary, on loop-mounted XFS,
// and runs what they install with the host's own copies hidden: a Go toolchain made of two
// packages, python3.11 with its standard library from others, and curl with its chain of
// libraries. The .debs come from the host's apt (apt-get download) at test time, into a
// cache directory kept between runs ($PKG_TEST_DEBS, else /var/tmp/pkg-test-debs); none is
// committed. The eslint@9 tree of npm packages (issue #33) is resolved by npm against the
// registry as of a fixed date and its tarballs downloaded at test time too, into
// $PKG_TEST_NPM, else /var/tmp/pkg-test-npm; node and npm come from the host. It has no
// code outside its tests.
package realworld
