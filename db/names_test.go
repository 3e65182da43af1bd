package db

import (
	"testing"

	"pkg/repo"
)

func TestNeedInstalled(t *testing.T) {
	libz1 := []repo.Requirement{{Name: "libz1"}}
	awk := []repo.Requirement{{Name: "awk"}}
	installed := []Record{{Name: "hello"}, {Name: "lib"}, {Name: "zlib1g", Provides: libz1}, {Name: "zlib-ng", Provides: libz1},
		{Name: "gawk", Provides: awk}, {Name: "mawk", Provides: awk}, {Name: "original-awk", Provides: awk}}
	tests := []struct {
		names []string
		want  string // the error, "" for none
	}{
		{[]string{"hello", "lib"}, ""},
		{[]string{"hello>=1"}, "remove takes names of installed packages, not hello>=1"},
		{[]string{"a/b"}, `remove: "a/b" is not a package name`},
		{[]string{"lib", "helo"}, `remove helo: not installed; did you mean "hello"?`},
		{[]string{"zzz"}, "remove zzz: not installed"},
		{[]string{"libz1"}, "remove libz1: not installed; installed zlib-ng and zlib1g provide it"},
		{[]string{"awk"}, "remove awk: not installed; installed gawk, mawk and original-awk provide it"},
	}
	for _, tt := range tests {
		err := NeedInstalled("remove", tt.names, installed)
		if got := errString(err); got != tt.want {
			t.Errorf("NeedInstalled(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
