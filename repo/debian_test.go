package repo

import (
	"slices"
	"strings"
	"testing"
)

// bookworm is the relations of 57 Debian 12 (bookworm) amd64 packages, in testIndex's
// notation, copied from their control files (dpkg-deb -f X.deb; the .debs came from
// apt-get download: the curl, python3.11, golang-1.19 and tar chains): Pre-Depends and
// Depends as depends, Breaks with Conflicts, "<<" as "<", ">>" as ">", alternatives
// joined by "|". It has libc6 <-> libgcc-s1, a cycle; zlib1g providing libz1; packages
// whose conflicts name what they provide themselves (libcom-err2, libffi8); and
// alternatives (media-types|mime-support, dpkg>=1.15.4|install-info).
var bookworm = []string{
	"curl 7.88.1-10+deb12u15 libc6>=2.34 libcurl4=7.88.1-10+deb12u15 zlib1g>=1:1.1.4",
	"dpkg 1.21.23 libbz2-1.0 libc6>=2.34 liblzma5>=5.4.0 libmd0>=0.0.0 libselinux1>=3.1~ libzstd1>=1.5.2 zlib1g>=1:1.1.4 tar>=1.28-1 conflicts:libapt-pkg5.0<1.7~b conflicts:lsb-base<10.2019031300",
	"gcc-12-base 12.2.0-14+deb12u1 conflicts:gnat<7",
	"golang-1.19-go 1.19.8-2 golang-1.19-src>=1.19.8-2 libc6>=2.34 conflicts:dh-golang<1.43~",
	"golang-1.19-src 1.19.8-2",
	"libacl1 2.3.1-3 libc6>=2.33",
	"libbrotli1 1.0.9-2+deb12u1 libc6>=2.29",
	"libbz2-1.0 1.0.8-5+b1 libc6>=2.4",
	"libc6 2.36-9+deb12u14 libgcc-s1 conflicts:aide<0.17.3-4+b3 conflicts:busybox<1.30.1-6 conflicts:chrony<4.2-3~ conflicts:fakechroot<2.19-3.5 conflicts:firefox<91~ conflicts:firefox-esr<91~ conflicts:gnumach-image-1.8-486<2:1.8+git20210923~ conflicts:gnumach-image-1.8-486-dbg<2:1.8+git20210923~ conflicts:gnumach-image-1.8-xen-486<2:1.8+git20210923~ conflicts:gnumach-image-1.8-xen-486-dbg<2:1.8+git20210923~ conflicts:hurd<1:0.9.git20220301-2 conflicts:ioquake3<1.36+u20200211.f2c61c1~dfsg-2~ conflicts:iraf-fitsutil<2018.07.06-4 conflicts:libgegl-0.4-0<0.4.18 conflicts:libtirpc1<0.2.3 conflicts:locales<2.36 conflicts:locales-all<2.36 conflicts:macs<2.2.7.1-3~ conflicts:nocache<1.1-1~ conflicts:nscd<2.36 conflicts:openarena<0.8.8+dfsg-4~ conflicts:openssh-server<1:8.1p1-5 conflicts:python3-iptables<1.0.0-2 conflicts:r-cran-later<0.7.5+dfsg-2 conflicts:tinydns<1:1.05-14 conflicts:valgrind<1:3.19.0-1~ conflicts:wcc<0.0.2+dfsg-3 replaces:libc6-amd64",
	"libcom-err2 1.47.0-2+b2 libc6>=2.17 provides:libcomerr2=1.47.0-2+b2 conflicts:libcomerr2<1.43.9-1~ replaces:libcomerr2<1.43.9-1~",
	"libcrypt1 1:4.4.33-2 libc6>=2.36 conflicts:libpam0g<1.4.0-10 replaces:libc6<2.29-4",
	"libcurl4 7.88.1-10+deb12u15 libbrotli1>=0.6.0 libc6>=2.34 libgssapi-krb5-2>=1.17 libidn2-0>=0.6 libldap-2.5-0>=2.5.4 libnghttp2-14>=1.50.0 libpsl5>=0.16.0 librtmp1>=2.3 libssh2-1>=1.7.0 libssl3>=3.0.0 libzstd1>=1.5.2 zlib1g>=1:1.1.4 conflicts:libcurl3 replaces:libcurl3",
	"libdb5.3 5.3.28+dfsg2-1 libc6>=2.34",
	"libexpat1 2.5.0-1+deb12u5 libc6>=2.36",
	"libffi8 3.4.4-1 libc6>=2.34 provides:libffi8ubuntu1=3.4.4-1 conflicts:libffi8ubuntu1<3.4.2-1 replaces:libffi8ubuntu1<3.4.2-1",
	"libgcc-s1 12.2.0-14+deb12u1 gcc-12-base=12.2.0-14+deb12u1 libc6>=2.35 provides:libgcc1=1:12.2.0-14+deb12u1 replaces:libgcc1<1:10",
	"libgmp10 2:6.2.1+dfsg1-1.1 libc6>=2.14 conflicts:libmath-gmp-perl<2.20-1 conflicts:libmath-prime-util-gmp-perl<0.51-2 conflicts:postgresql-pgmp<1.0.3-1",
	"libgnutls30 3.7.9-2+deb12u7 libc6>=2.34 libgmp10>=2:6.2.1+dfsg1 libhogweed6>=3.6 libidn2-0>=2.0.0 libnettle8>=3.7~ libp11-kit0>=0.23.18.1 libtasn1-6>=4.14 libunistring2>=0.9.7",
	"libgssapi-krb5-2 1.20.1-2+deb12u5 libc6>=2.33 libcom-err2>=1.43.9 libk5crypto3>=1.20 libkrb5-3=1.20.1-2+deb12u5 libkrb5support0>=1.15~beta1 conflicts:moonshot-gss-eap<=1.0",
	"libhogweed6 3.8.1-2 libc6>=2.14 libgmp10>=2:6.2.1+dfsg1 libnettle8",
	"libidn2-0 2.3.3-1+b1 libc6>=2.14 libunistring2>=0.9.7",
	"libk5crypto3 1.20.1-2+deb12u5 libc6>=2.33 libkrb5support0>=1.20 conflicts:libgssapi-krb5-2<=1.18~ conflicts:libkrb5-3<=1.18~",
	"libkeyutils1 1.6.3-2 libc6>=2.14",
	"libkrb5-3 1.20.1-2+deb12u5 libc6>=2.34 libcom-err2>=1.43.9 libk5crypto3>=1.20 libkeyutils1>=1.5.9 libkrb5support0=1.20.1-2+deb12u5 libssl3>=3.0.0 conflicts:libapache2-mod-auth-kerb<=5.4-2.4 conflicts:libsmbclient<=2:3.6.1-2 conflicts:sssd<=1.2.1-4.3",
	"libkrb5support0 1.20.1-2+deb12u5 libc6>=2.34 conflicts:libgssapi-krb5-2<1.20 conflicts:libk5crypto3<1.20 conflicts:libkadm5clnt-mit9<1.13~alpha1-1 conflicts:libkadm5srv-mit9<1.13~alpha1-1 conflicts:libkdb5-8<1.16",
	"libldap-2.5-0 2.5.13+dfsg-5 libc6>=2.34 libgnutls30>=3.7.5 libsasl2-2>=2.1.28+dfsg conflicts:ldap-utils<=2.1.23-1 replaces:libldap-2.3-0 replaces:libldap2",
	"liblzma5 5.4.1-1+deb12u2 libc6>=2.34 conflicts:liblzma2<5.1.1alpha+20110809-3~",
	"libmd0 1.0.4-2 libc6>=2.33",
	"libncursesw6 6.4-4 libtinfo6=6.4-4 libc6>=2.34",
	"libnettle8 3.8.1-2 libc6>=2.17",
	"libnghttp2-14 1.52.0-1+deb12u3 libc6>=2.17",
	"libnsl2 1.3.0-2 libc6>=2.14 libtirpc3>=1.0.2",
	"libp11-kit0 0.24.1-2 libc6>=2.34 libffi8>=3.4",
	"libpcre2-8-0 10.42-1+deb12u2 libc6>=2.34",
	"libpsl5 0.21.2-1 libidn2-0>=0.16 libc6>=2.33 libunistring2>=0.9.7",
	"libpython3.11-minimal 3.11.2-6+deb12u9 libc6>=2.14 libssl3>=3.0.0 conflicts:binfmt-support<1.1.2",
	"libpython3.11-stdlib 3.11.2-6+deb12u9 libpython3.11-minimal=3.11.2-6+deb12u9 media-types|mime-support libbz2-1.0 libc6>=2.34 libcrypt1>=1:4.1.0 libdb5.3 libffi8>=3.4 liblzma5>=5.1.1alpha+20120614 libncursesw6>=6.1 libnsl2>=1.0 libreadline8>=7.0~beta libsqlite3-0>=3.36.0 libtinfo6>=6 libtirpc3>=1.0.2 libuuid1>=2.20.1 conflicts:python3-gdbm<3.9.9-1~ replaces:python3-gdbm<3.9.9-1~",
	"libreadline8 8.2-1.3 readline-common libc6>=2.33 libtinfo6>=6",
	"librtmp1 2.4+20151223.gitfa8646d.1-2+b2 libc6>=2.14 libgmp10 libgnutls30>=3.6.14 libhogweed6 libnettle8 zlib1g>=1:1.1.4",
	"libsasl2-2 2.1.28+dfsg-10+deb12u1 libsasl2-modules-db>=2.1.28+dfsg-10+deb12u1 libc6>=2.34 replaces:libsasl2",
	"libsasl2-modules-db 2.1.28+dfsg-10+deb12u1 libc6>=2.14 libdb5.3",
	"libselinux1 3.4-1+b6 libc6>=2.34 libpcre2-8-0>=10.22",
	"libsqlite3-0 3.40.1-2+deb12u2 libc6>=2.34 conflicts:crowdsec<1.4 conflicts:python-migrate<0.11.0-4~ conflicts:python3-migrate<0.11.0-4~",
	"libssh2-1 1.10.0-3+deb12u1 libc6>=2.14 libssl3>=3.0.0 zlib1g>=1:1.1.4",
	"libssl3 3.0.22-1~deb12u2 libc6>=2.34",
	"libtasn1-6 4.19.0-2+deb12u1 libc6>=2.14",
	"libtinfo6 6.4-4 libc6>=2.34",
	"libtirpc-common 1.3.3+ds-1 conflicts:libtirpc1 conflicts:libtirpc3<1.1.4-0.1~ replaces:libtirpc1 replaces:libtirpc3<1.1.4-0.1~",
	"libtirpc3 1.3.3+ds-1 libc6>=2.34 libgssapi-krb5-2>=1.17 libtirpc-common>=1.3.3+ds-1 conflicts:nfs-common<1:1.2.8-7 conflicts:nfs-kernel-server<1:1.2.8-7",
	"libunistring2 1.0-2 libc6>=2.34",
	"libuuid1 2.38.1-5+deb12u3 libc6>=2.25",
	"libzstd1 1.5.4+dfsg2-5+deb12u1 libc6>=2.34",
	"media-types 10.0.0 conflicts:mime-support<3.65 replaces:mime-support<3.65",
	"python3.11-minimal 3.11.2-6+deb12u9 libc6>=2.35 libpython3.11-minimal=3.11.2-6+deb12u9 libexpat1>=2.1~beta3 zlib1g>=1:1.2.0 conflicts:binfmt-support<1.1.2",
	"readline-common 8.2-1.3 dpkg>=1.15.4|install-info conflicts:libreadline-common conflicts:libreadline5<5.0-11 replaces:libreadline-common replaces:libreadline4<4.3-16 replaces:libreadline5<5.0-11",
	"tar 1.34+dfsg-1.2+deb12u1 libacl1>=2.2.23 libc6>=2.34 libselinux1>=3.1~ conflicts:cpio<=2.4.2-38 conflicts:dpkg-dev<1.14.26 replaces:cpio<2.4.2-39",
	"zlib1g 1:1.2.13.dfsg-1+deb12u1 libc6>=2.14 provides:libz1 conflicts:zlib1<=1:1.0.4-7 conflicts:libxml2<2.7.6.dfsg-2 conflicts:texlive-binaries<2009-12",
}

// curlChain is what curl needs in bookworm: curl, libcurl4 and their 30 dependencies.
var curlChain = []string{"curl", "gcc-12-base", "libbrotli1", "libc6", "libcom-err2", "libcurl4", "libdb5.3", "libffi8",
	"libgcc-s1", "libgmp10", "libgnutls30", "libgssapi-krb5-2", "libhogweed6", "libidn2-0", "libk5crypto3", "libkeyutils1",
	"libkrb5-3", "libkrb5support0", "libldap-2.5-0", "libnettle8", "libnghttp2-14", "libp11-kit0", "libpsl5", "librtmp1",
	"libsasl2-2", "libsasl2-modules-db", "libssh2-1", "libssl3", "libtasn1-6", "libunistring2", "libzstd1", "zlib1g"}

func names(ps []Package) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// TestResolveDebian resolves real Debian relations: the curl chain, with its libc6 <->
// libgcc-s1 cycle first (everything depends on libc6), then the rest dependencies first.
func TestResolveDebian(t *testing.T) {
	ix := testIndex(bookworm...)
	got, err := ix.Resolve(parseReqs(t, "curl"))
	if err != nil {
		t.Fatal(err)
	}
	checkResolved(t, parseReqs(t, "curl"), got)
	if !slices.Equal(slices.Sorted(slices.Values(names(got))), curlChain) {
		t.Errorf("Resolve(curl) = %s, want the %d packages of %s", ids(got), len(curlChain), curlChain)
	}
	if first := strings.Join(names(got[:3]), " "); first != "gcc-12-base libc6 libgcc-s1" {
		t.Errorf("Resolve(curl) starts %s, want gcc-12-base, then the cycle libc6 libgcc-s1", first)
	}
	if last := got[len(got)-1]; last.Name != "curl" {
		t.Errorf("Resolve(curl) ends with %s, want curl", last.Name)
	}
	again, _ := ix.Resolve(parseReqs(t, "curl"))
	if ids(again) != ids(got) {
		t.Errorf("Resolve(curl) twice: %s, then %s", ids(got), ids(again))
	}
}

// TestResolveDebianAlternatives resolves the packages of bookworm that have alternatives:
// the first alternative the index has is taken.
func TestResolveDebianAlternatives(t *testing.T) {
	ix := testIndex(bookworm...)
	for _, tt := range []struct{ req, has, lacks string }{
		{"libpython3.11-stdlib", "media-types", "mime-support"},
		{"readline-common", "dpkg", "install-info"},
		{"python3.11-minimal", "zlib1g", ""},
	} {
		got, err := ix.Resolve(parseReqs(t, tt.req))
		if err != nil {
			t.Fatalf("Resolve(%s): %v", tt.req, err)
		}
		checkResolved(t, parseReqs(t, tt.req), got)
		if !slices.Contains(names(got), tt.has) || slices.Contains(names(got), tt.lacks) {
			t.Errorf("Resolve(%s) = %s, want %s in it and not %s", tt.req, ids(got), tt.has, tt.lacks)
		}
	}
	// Without dpkg, readline-common's dpkg>=1.15.4|install-info is met by neither.
	var nodpkg []string
	for _, l := range bookworm {
		if !strings.HasPrefix(l, "dpkg ") {
			nodpkg = append(nodpkg, l)
		}
	}
	_, err := testIndex(nodpkg...).Resolve(parseReqs(t, "readline-common"))
	if !sameError(err, &MissingError{Name: "dpkg>=1.15.4|install-info", By: "readline-common 8.2-1.3"}) {
		t.Errorf("Resolve(readline-common) without dpkg: %v, want a *MissingError for its alternatives", err)
	}
}

// TestResolveDebianVirtual checks zlib1g's unversioned provides of libz1 in bookworm: it
// meets libz1, not libz1>=1.
func TestResolveDebianVirtual(t *testing.T) {
	ix := testIndex(append(slices.Clone(bookworm), "app 1 libz1", "strict 1 libz1>=1:1.2")...)
	got, err := ix.Resolve(parseReqs(t, "app"))
	if err != nil || !slices.Contains(names(got), "zlib1g") {
		t.Errorf("Resolve(app) = %s, %v; want zlib1g for libz1", ids(got), err)
	}
	_, err = ix.Resolve(parseReqs(t, "strict"))
	if !sameError(err, &MissingError{Name: "libz1>=1:1.2", By: "strict 1", Providers: []string{"zlib1g"}}) {
		t.Errorf("Resolve(strict) = %v, want a *MissingError: an unversioned provides meets no versioned need", err)
	}
}
