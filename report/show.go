package report

import (
	"fmt"
	"io"
)

// WriteText prints the files' paths in the root, one a line.
func (f Files) WriteText(w io.Writer) error {
	for _, e := range f.Files {
		if _, err := fmt.Fprintln(w, e.InRoot); err != nil {
			return err
		}
	}
	return nil
}
