package repo

import (
	"errors"
	"fmt"
)

// ErrContents is an archive whose files differ in number or size from what its
// index entry says.
var ErrContents = errors.New("repo: archive differs from its index entry")

// CheckContents refuses an archive of files files (members but directories)
// holding bytes bytes of data when p's entry says otherwise (files,
// installed_size; zero says nothing).
func (p Package) CheckContents(files int, bytes int64) error {
	if p.Files != 0 && p.Files != files {
		return fmt.Errorf("%w: archive has %d files, index says %d", ErrContents, files, p.Files)
	}
	if p.InstalledSize != 0 && p.InstalledSize != bytes {
		return fmt.Errorf("%w: archive has %d bytes of files, index says installed_size %d", ErrContents, bytes, p.InstalledSize)
	}
	return nil
}
