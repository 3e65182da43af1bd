package fetch

import (
	"archive/tar"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// maxControl bounds a .deb's control file (dpkg's are a few KiB).
const maxControl = 1 << 20 // 1 MiB

// Control is what a .deb's control file says of its package (deb-control(5)).
type Control struct {
	Package     string
	Version     string
	Description string // its first line, the synopsis
	Depends     string // as written: Debian's names, alternatives and version operators
}

// readControl reads the control file out of the control member name, a tar, read from r.
func readControl(name string, r io.Reader) (*Control, error) {
	zr, err := decompress(bufio.NewReader(r), r)
	if err != nil {
		return nil, &debError{member: name, err: err}
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil, &debError{member: name, err: errDebNoControl}
		}
		if err != nil {
			return nil, &debError{member: name, err: err}
		}
		if strings.TrimPrefix(hdr.Name, "./") != "control" || hdr.Typeflag != tar.TypeReg {
			continue
		}
		if hdr.Size > maxControl {
			return nil, &debError{member: name, err: fmt.Errorf("control file over %d bytes", maxControl)}
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, &debError{member: name, err: err}
		}
		return parseControl(data), nil
	}
}

// parseControl reads the fields of a control file's first paragraph; a line that starts
// with a space or a tab continues the field before.
func parseControl(data []byte) *Control {
	var c Control
	var field *string
	for line := range bytes.Lines(data) {
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			break
		}
		if s[0] == ' ' || s[0] == '\t' {
			if field == &c.Depends {
				c.Depends += " " + strings.TrimSpace(s)
			}
			continue
		}
		k, v, _ := strings.Cut(s, ":")
		v = strings.TrimSpace(v)
		field = nil
		switch strings.ToLower(k) {
		case "package":
			c.Package = v
		case "version":
			c.Version = v
		case "description":
			c.Description = v
		case "depends":
			c.Depends, field = v, &c.Depends
		}
	}
	return &c
}
