package repo

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"pkg/internal/units"
)

// Host is the platform this program runs on, GOOS-GOARCH: the one an Index resolves for
// unless told another.
const Host = runtime.GOOS + "-" + runtime.GOARCH

// Go's targets (go tool dist list), the spellings a platform is made of.
var (
	goos = []string{"aix", "android", "darwin", "dragonfly", "freebsd", "illumos", "ios", "js",
		"linux", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows"}
	goarch = []string{"386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "mips64le",
		"mipsle", "ppc64", "ppc64le", "riscv64", "s390x", "wasm"}
	// otherArch are the spellings of other tools (uname -m, Debian) for Go's.
	otherArch = map[string]string{"x86_64": "amd64", "x86-64": "amd64", "x64": "amd64", "aarch64": "arm64",
		"i386": "386", "i686": "386", "armhf": "arm", "armel": "arm", "armv7l": "arm", "ppc64el": "ppc64le",
		"mipsel": "mipsle", "mips64el": "mips64le"}
)

// GoArch returns Go's spelling of the architecture arch, given as Go, uname -m or Debian
// (dpkg-architecture -L) spell it, or "" where Go has none (x32, hurd-i386).
func GoArch(arch string) string {
	if slices.Contains(goarch, arch) {
		return arch
	}
	return otherArch[arch]
}

// ParsePlatforms returns the platforms of values, each one or several joined by commas,
// refusing any CheckPlatform refuses.
func ParsePlatforms(values []string) ([]string, error) {
	var platforms []string
	for _, v := range values {
		for p := range strings.SplitSeq(v, ",") {
			if err := CheckPlatform(p); err != nil {
				return nil, err
			}
			platforms = append(platforms, p)
		}
	}
	return platforms, nil
}

// CheckPlatform returns an error unless s is a platform as Go spells its targets,
// GOOS-GOARCH ("linux-amd64", "linux-arm64").
func CheckPlatform(s string) error {
	goOS, arch, ok := strings.Cut(s, "-")
	if ok && slices.Contains(goos, goOS) && slices.Contains(goarch, arch) {
		return nil
	}
	e := &badPlatformError{Platform: s}
	if a, ok := otherArch[arch]; ok && slices.Contains(goos, goOS) {
		e.Near = goOS + "-" + a
	}
	return e
}

// badPlatformError is a platform that is not GOOS-GOARCH as Go spells them.
type badPlatformError struct {
	Platform string
	Near     string // the platform meant, where Platform spells its architecture otherwise ("x86_64"), or ""
}

func (e *badPlatformError) Error() string {
	hint := ""
	if e.Near != "" {
		hint = fmt.Sprintf("; did you mean %q?", e.Near)
	}
	return fmt.Sprintf("bad platform %.40q: want GOOS-GOARCH as Go spells them, such as linux-amd64 or linux-arm64%s", e.Platform, hint)
}

// ForPlatform returns ix as it resolves for platform: its entries for platform and those
// for any platform. The packages are shared with ix.
func (ix *Index) ForPlatform(platform string) *Index {
	out := *ix
	out.Platform = platform
	return &out
}

// target is the platform ix resolves for.
func (ix *Index) target() string {
	if ix.Platform == "" {
		return Host
	}
	return ix.Platform
}

// runsOn reports whether p is for platform: p's own, or any when p names none.
func (p *Package) runsOn(platform string) bool {
	return p.Platform == "" || p.Platform == platform
}

// platformError is returned for a package that an index offers only for other platforms
// than the one resolved for.
type platformError struct {
	Name, Version string   // the package, at the newest version offered elsewhere
	Offered       []string // the platforms offering it, sorted
	Platform      string   // the platform resolved for
}

func (e *platformError) Error() string {
	where := "this machine is " + e.Platform
	if e.Platform != Host {
		where = "not for " + e.Platform
	}
	return fmt.Sprintf("%s %s is offered for %s only; %s", e.Name, e.Version, units.List(e.Offered, 0), where)
}

// elsewhere returns the error for name, which ix has no entry of for its target platform:
// a *platformError when it has one for another, else nil.
func (ix *Index) elsewhere(name string) error {
	var e *platformError
	for _, p := range ix.Packages {
		if p.Name != name || p.runsOn(ix.target()) {
			continue
		}
		if e == nil {
			e = &platformError{Name: name, Version: p.Version, Platform: ix.target()}
		}
		if compareFor(p.Kind, p.Version, e.Version) > 0 {
			e.Version = p.Version
		}
		if !slices.Contains(e.Offered, p.Platform) {
			e.Offered = append(e.Offered, p.Platform)
		}
	}
	if e == nil {
		return nil
	}
	slices.Sort(e.Offered)
	return e
}

// Platforms returns the platforms ix's entries name, sorted: none for an index whose
// packages are all for any platform.
func (ix *Index) Platforms() []string {
	var out []string
	for _, p := range ix.Packages {
		if p.Platform != "" && !slices.Contains(out, p.Platform) {
			out = append(out, p.Platform)
		}
	}
	slices.Sort(out)
	return out
}
