package repo

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckNames(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  *NameError // nil for none
	}{
		{[]string{"hello", "lib", "Hello"}, nil},
		{[]string{"hello", "hello=1.0"}, &NameError{Op: "upgrade", Arg: "hello=1.0", Versioned: true}},
		{[]string{"hello>=1"}, &NameError{Op: "upgrade", Arg: "hello>=1", Versioned: true}},
		{[]string{"a/b"}, &NameError{Op: "upgrade", Arg: "a/b"}},
	} {
		err := CheckNames("upgrade", tt.names)
		var ne *NameError
		switch {
		case tt.want == nil && err != nil:
			t.Errorf("CheckNames(%q) = %v, want nil", tt.names, err)
		case tt.want != nil && (!errors.As(err, &ne) || *ne != *tt.want):
			t.Errorf("CheckNames(%q) = %#v, want %#v", tt.names, err, tt.want)
		}
	}
}

// TestNameErrorEscapes: a name holding a control character is said escaped as the rest of
// pkg's output escapes it (\u001b), not as %q does.
func TestNameErrorEscapes(t *testing.T) {
	err := CheckNames("remove", []string{"a\x1bb"})
	if err == nil || !strings.Contains(err.Error(), `"a\u001bb" is not a package name`) {
		t.Errorf("CheckNames(a ESC b) = %v; want the name quoted with \\u001b", err)
	}
	if _, err := ParseRequirement("a\x1bb"); err == nil || strings.Contains(err.Error(), `\x1b`) || !strings.Contains(err.Error(), `"a\u001bb"`) {
		t.Errorf("ParseRequirement(a ESC b) = %v; want the name quoted with \\u001b", err)
	}
}
