package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, tt := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}, "0123456789ab (go1.25)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}, "0123456789ab+changes (go1.25)"},
		{nil, "(devel) (go1.25)"},
	} {
		info := &debug.BuildInfo{GoVersion: "go1.25", Main: debug.Module{Version: "(devel)"}, Settings: tt.settings}
		if got := version(info); got != tt.want {
			t.Errorf("version(%v) = %q, want %q", tt.settings, got, tt.want)
		}
	}
	if got := Version(); !strings.Contains(got, " (go") {
		t.Errorf("Version() = %q", got)
	}
}
