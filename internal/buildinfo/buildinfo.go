// Package buildinfo describes the build of the running binary, as the go command recorded
// it (runtime/debug.ReadBuildInfo).
package buildinfo

import "runtime/debug"

// Version is the commit the binary was built from, when the go command recorded one
// ("+changes" if the tree had uncommitted ones), else the main module's version, and the
// Go release: "0123456789ab+changes (go1.25.1)".
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return version(info)
}

func version(info *debug.BuildInfo) string {
	rev, dirty := "", ""
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+changes"
		}
	}
	if rev == "" {
		rev = info.Main.Version
	}
	return rev + dirty + " (" + info.GoVersion + ")"
}
