// Package realworld installs real Debian packages with the pkg binary, on loop-mounted XFS,
// and runs what they install with the host's own copies hidden: a Go toolchain made of two
// packages, python3.11 with its standard library from others, and curl with its chain of
// libraries. The .debs come from the host's apt (apt-get download) at test time, into a
// cache directory kept between runs ($PKG_TEST_DEBS, else /var/tmp/pkg-test-debs); none is
// committed. It has no code outside its tests.
package realworld
