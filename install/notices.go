package install

import "pkg/db"

// Notices says a standing condition (an unsigned repository, a root that cannot share
// blocks with the cache) once per root until it changes: the root records, under the
// condition's key, the state it was in when said (Root.remember), and a later command
// that finds the same state says nothing. Where there is no root yet, or the line was not
// printed (a note under a quiet command), nothing is recorded, and the next command says
// it. The zero value is ready once Dir is set.
type Notices struct {
	Dir     string  // the root, read for what it records while no root is held
	Options Options // for reading it
	DryRun  bool    // record nothing: a dry run leaves the root as it was

	root    *Root
	pending map[string]string // said, not yet recorded
}

// Due reports whether the condition key is to be said in state: the root does not record
// that the user was told of it in that state. State "" is the condition's end (End),
// never due. A caller that prints it then records it with Said.
func (n *Notices) Due(key, state string) bool { return state != "" && state != n.Told(key) }

// Said records that the user was told of the condition key in state.
func (n *Notices) Said(key, state string) { n.remember(key, state) }

// End forgets what was said of the condition key, which holds no more, so that it is
// said again should it return.
func (n *Notices) End(key string) {
	if n.Told(key) != "" {
		n.remember(key, "")
	}
}

func (n *Notices) remember(key, state string) {
	if n.pending == nil {
		n.pending = make(map[string]string)
	}
	n.pending[key] = state
	n.record()
}

// Hold records root as the one the command holds, and in it what was said before.
func (n *Notices) Hold(root *Root) {
	n.root = root
	n.record()
}

// Told returns the state the root records that the user was told of the condition key
// in, "" if none or if there is no root.
func (n *Notices) Told(key string) string {
	if n.root != nil {
		state, _ := n.root.DB().SaidState(key)
		return state
	}
	var state string
	View(n.Dir, n.Options, nil, func(d *db.DB) (err error) {
		state, err = d.SaidState(key)
		return err
	})
	return state
}

// record writes what was said into the held root, if any; what fails is said again.
func (n *Notices) record() {
	if n.root == nil || n.DryRun {
		return
	}
	for key, state := range n.pending {
		if n.root.remember(key, state) == nil {
			delete(n.pending, key)
		}
	}
}

// said is a condition the user is told of and its state (Notices), for a commit to record;
// where commands is set, only if bin/ holds commands once the change is done.
type said struct {
	key, state string
	commands   bool
}

// SayWithCommit has the next Apply's commit record that the user was told of the
// condition key in state, "" its end, as db.DB.PutSaidWithCommit says, failures included.
func (r *Root) SayWithCommit(key, state string) {
	r.sayings = append(r.sayings, said{key: key, state: state})
}
