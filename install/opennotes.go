package install

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// A Note is what a command says of a root it opened: a warning (Warn) or a note.
type Note struct {
	Warn bool
	Text string
}

// Notes returns what to say of r once opened, besides Links: what Open undid of an
// earlier command cut short, what it could not delete of that, and a root of another
// user's that this process, running as root, is about to write to.
func (r *Root) Notes() []Note {
	var ns []Note
	if r.found != "" {
		ns = append(ns, Note{false, "an earlier pkg command was cut short: " + r.found})
	}
	if r.left != nil {
		ns = append(ns, Note{true, fmt.Sprintf("could not delete what an earlier command left behind (the root is as recorded; delete it by hand): %s", r.left)})
	}
	var st unix.Stat_t
	if os.Geteuid() == 0 && unix.Fstat(r.fd[top], &st) == nil && st.Uid != 0 {
		ns = append(ns, Note{false, fmt.Sprintf("running as root in %s, which belongs to uid %d: what pkg installs there belongs to root, and that user cannot remove it; run pkg as that user", r.dir, st.Uid)})
	}
	return ns
}
