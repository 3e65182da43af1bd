package fetch

import (
	"archive/zip"
	"compress/flate"
	"errors"
	"io"
	"strings"
	"testing"

	"pkg/repo"
)

// TestPathErrorText pins what a refused archive URL says: the reason without the
// package's prefix, which only the reason alone carries.
func TestPathErrorText(t *testing.T) {
	const from = "http://x/repo/"
	s := quick(t, t.TempDir()) // refused before the repository is looked at
	for _, tt := range []struct{ path, want string }{
		{"../a.tar", `segment ".."`},
		{"a//b.tar", `segment ""`},
		{"a%2fb.tar", "encoded slash or backslash"},
		{`a\b.tar`, "backslash or NUL byte"},
		{"%252e%252e/a.tar", "encoded percent sign"},
		{"a%zz.tar", `invalid URL escape "%zz"`},
	} {
		archive := from + tt.path
		_, err := s.Relocate(repo.Package{Archive: archive}, from)
		if want := "archive URL " + archive + ": path under " + from + ": " + tt.want; err == nil || err.Error() != want {
			t.Errorf("Relocate(%s): %v; want %s", archive, err, want)
		}
	}
	if got, want := errPathSegment.Error(), "fetch: segment"; got != want {
		t.Errorf("errPathSegment says %q, want %q", got, want)
	}
}

// TestZipErrorText pins what a zip member that cannot be read says: the reason without
// the prefix of fetch or of archive/zip, which only the reason alone carries.
func TestZipErrorText(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{errZipEncrypted, "encrypted"},
		{zip.ErrChecksum, "checksum error"},
		{zip.ErrAlgorithm, "unsupported compression algorithm"},
		{zip.ErrFormat, "not a valid zip file"},
		{io.ErrUnexpectedEOF, "unexpected EOF"},
		{flate.CorruptInputError(5), "flate: corrupt input before offset 5"},
	} {
		err := &zipError{"a b", tt.err}
		if got, want := err.Error(), `zip member "a b": `+tt.want; got != want {
			t.Errorf("zipError of %v says %q, want %q", tt.err, got, want)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("zipError of %v is not it", tt.err)
		}
	}
	if got, want := (&zipError{"a", unhashableError{"b", "c"}}).Error(), `zip member "a": b, c`; got != want {
		t.Errorf("zipError of an unhashable error says %q, want %q", got, want)
	}
	if got, want := errZipEncrypted.Error(), "fetch: encrypted"; got != want {
		t.Errorf("errZipEncrypted says %q, want %q", got, want)
	}
}

// unhashableError is an error of a type that cannot be a map key.
type unhashableError []string

func (e unhashableError) Error() string { return strings.Join(e, ", ") }
