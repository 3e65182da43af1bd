package repo

import (
	"errors"
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
