// Package buildinfo describes the build of the running binary, as the go command recorded
// it in the binary's .go.buildinfo section, read through /proc/self/exe. It imports only
// packages that Go initializes first (errors, io, syscall), so that it can answer from an
// initializer that runs before the heavy packages' (cmd/pkg/internal/early):
// runtime/debug.ReadBuildInfo reads the same record from memory but imports fmt and what
// fmt imports. It reads little-endian ELF binaries, 64-bit and 32-bit, and only the
// running one.
package buildinfo

// Version is the commit the binary was built from, when the go command recorded one
// ("+changes" if the tree had uncommitted ones), else the main module's version, and the
// Go release: "0123456789ab+changes (go1.25.1)". ok is false where the binary cannot be
// read (no /proc, a binary its user may run but not read, one without section headers):
// runtime/debug.ReadBuildInfo's record, given to FromText, says the same.
func Version() (v string, ok bool) {
	goVersion, modinfo, err := read("/proc/self/exe")
	if err != nil {
		return "", false
	}
	return FromText(goVersion, modinfo), true
}

// FromText is Version of a record's Go version and module text, in the form of
// runtime/debug.BuildInfo's String ("mod\tPATH\tVERSION\tSUM" and "build\tKEY=VALUE" lines
// among others).
func FromText(goVersion, modinfo string) string {
	main, rev, dirty := "", "", ""
	for rest := modinfo; rest != ""; {
		var line string
		line, rest, _ = cut(rest, '\n')
		switch kind, fields, _ := cut(line, '\t'); kind {
		case "mod":
			_, fields, _ = cut(fields, '\t')
			main, _, _ = cut(fields, '\t')
		case "build":
			switch key, value, _ := cut(fields, '='); {
			case key == "vcs.revision":
				rev = value[:min(len(value), 12)]
			case key == "vcs.modified" && value == "true":
				dirty = "+changes"
			}
		}
	}
	if rev == "" {
		rev = main
	}
	return rev + dirty + " (" + goVersion + ")"
}

// cut is strings.Cut of a byte: this package imports no more than early's initializer
// needs (strings waits for unicode, which Go initializes after most of pkg's packages).
func cut(s string, sep byte) (before, after string, found bool) {
	for i := range len(s) {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
