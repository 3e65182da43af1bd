package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"pkg/internal/regfile"
)

// A trusted-keys file holds trusted keys as parseKeys reads them. AddTrusted and
// RemoveTrusted edit one, keeping its other lines and their comments, and replace it
// atomically: a crash leaves the old file or the new one.

// ReadTrusted returns the keys of the trusted-keys file at path: none if there is no file.
func ReadTrusted(path string) ([]PublicKey, error) {
	data, err := regfile.ReadFile(path, maxKeysFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var keys []PublicKey
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		ks, err := readLine(path, n, line)
		if err != nil {
			return nil, err
		}
		keys = append(keys, ks...)
	}
	return keys, nil
}

// readLine returns the keys of line n of the trusted-keys file at path (parseLine), or a
// *LineError naming it.
func readLine(path string, n int, line string) ([]PublicKey, error) {
	keys, err := parseLine(line)
	if err != nil {
		return nil, &LineError{Path: path, Line: n, Err: err}
	}
	return keys, nil
}

// LineError is a line of a trusted-keys file that does not hold keys.
type LineError struct {
	Path string
	Line int // from 1
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// A KeysFile is a trusted-keys file that AddTrusted and RemoveTrusted edit, read and
// replaced whole where its keeper says (install.Root.TrustedKeys: through the descriptor of
// the root's directory, not by path).
type KeysFile interface {
	Name() string              // where it is, for messages
	Read() ([]byte, error)     // without blocking on a FIFO; an error matching fs.ErrNotExist where there is none
	Replace(data []byte) error // atomically: a crash leaves the old file or the new one
}

// AddTrusted adds k, with its binding, to the trusted-keys file f, creating the file, in
// place of the entries of the same key, which it returns.
func AddTrusted(f KeysFile, k PublicKey) (replaced []PublicKey, err error) {
	return editTrusted(f, k.ID(), k.String())
}

// RemoveTrusted removes the entries of the key whose ID is id from the trusted-keys file f
// and returns them.
func RemoveTrusted(f KeysFile, id string) (removed []PublicKey, err error) {
	return editTrusted(f, id, "")
}

// editTrusted drops the entries of key id from the file f, appends the entry add unless
// it is "", and returns the entries dropped; it leaves a file with neither as it is. A
// line left with no key goes, with its comment, which was about that key; a file left
// with nothing is kept empty.
func editTrusted(f KeysFile, id, add string) (dropped []PublicKey, err error) {
	path := f.Name()
	data, err := f.Read()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var b strings.Builder
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		keys, err := readLine(path, n, line)
		if err != nil {
			return nil, err
		}
		var keep []string
		for _, k := range keys {
			if k.ID() == id {
				dropped = append(dropped, k)
			} else {
				keep = append(keep, k.String())
			}
		}
		text := strings.TrimRight(line, "\r\n")
		_, comment, commented := strings.Cut(text, "#")
		switch {
		case len(keep) == len(keys):
			b.WriteString(text + "\n")
		case len(keep) > 0 && commented:
			b.WriteString(strings.Join(keep, " ") + "  #" + comment + "\n")
		case len(keep) > 0:
			b.WriteString(strings.Join(keep, " ") + "\n")
		}
	}
	if add == "" && len(dropped) == 0 {
		return nil, nil
	}
	if add != "" {
		b.WriteString(add + "\n")
	}
	if err := f.Replace([]byte(b.String())); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return dropped, nil
}
