package xdg

import "testing"

func TestDir(t *testing.T) {
	for _, tt := range []struct {
		env, home, want string
	}{
		{"/x/cache", "/home/u", "/x/cache/pkg"},
		{"", "/home/u", "/home/u/.cache/pkg"},
		{"x/cache", "/home/u", "/home/u/.cache/pkg"}, // relative: ignored
		{"/x/cache", "", "/x/cache/pkg"},
		{"", "", ""},
		{"x/cache", "", ""},
	} {
		t.Setenv("XDG_CACHE_HOME", tt.env)
		t.Setenv("HOME", tt.home)
		if got := Dir("XDG_CACHE_HOME", ".cache"); got != tt.want {
			t.Errorf("Dir with XDG_CACHE_HOME %q and HOME %q = %q, want %q", tt.env, tt.home, got, tt.want)
		}
	}
}
