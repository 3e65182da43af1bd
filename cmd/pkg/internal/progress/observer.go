package progress

import (
	"fmt"
	"io"
)

// A Display is what a command's session reports to (a txn.Observer, less the reports
// whose advice names the command's own flags and the notices, which the command adds and
// words): its fetches go to a Reporter, its notes above the bars, its warnings and waits
// to the notes' writer.
type Display struct {
	*Reporter
	name, root string
}

// NewObserver returns an Observer printing to out and notes, each note, warning and wait
// begun with name ("pkg"), saying of a wait for the root's lock that it waits for root.
// o's NotePrefix is set from name.
func NewObserver(out, notes io.Writer, name, root string, o Options) *Display {
	o.NotePrefix = name + ": note: "
	return &Display{Reporter: New(out, notes, o), name: name, root: root}
}

// Note prints text as a note, unless Quiet.
func (o *Display) Note(text string) { o.Reporter.Note("%s", text) }

// Warn prints text as a warning, unless Quiet: quiet prints only errors.
func (o *Display) Warn(text string) {
	if !o.o.Quiet {
		fmt.Fprintf(o.notes, "%s: warning: %s\n", o.name, text)
	}
}

// RootWaiting says, as a note, that the process holder keeps the root's lock.
func (o *Display) RootWaiting(holder string) {
	o.Reporter.Note("waiting for %s to finish with %s", holder, o.root)
}

// Verbose makes the fetches from now on also say which packages were in the cache already.
func (o *Display) Verbose() { o.o.Verbose = true }
