package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"

	"pkg/db"
)

// trashChildEnv marks a process started to empty a root's trash (RunTrashChild).
const trashChildEnv = "PKG_EMPTY_TRASH"

// detachable is set once RunTrashChild has found this process a parent, so that its
// executable can be started as a child that empties the trash.
var detachable atomic.Bool

// RunTrashChild empties the trash trees a parent pkg process handed to this one and
// reports true, if this process was started to; a program calls it first thing in main,
// and exits at once when it returns true. Otherwise it lets Apply hand the trees removed
// by a committed change to such a child, which holds the root's lock until it has deleted
// them, so that the command returns before its unlinks are done and the next command that
// changes the root waits for them. A child killed meanwhile leaves the rest in the trash,
// which the next start deletes.
func RunTrashChild() bool {
	if os.Getenv(trashChildEnv) != "1" || len(os.Args) < 2 {
		detachable.Store(true)
		return false
	}
	lock := os.NewFile(3, "lock") // the parent's, locked: held until this process exits
	owner := "pid " + strconv.Itoa(os.Getpid()) + " (deleting the trees a command removed)"
	if lock.Truncate(0) == nil {
		lock.WriteAt([]byte(owner), 0)
	}
	r := &Root{dir: os.Args[1]}
	for _, rel := range os.Args[2:] {
		r.removeTree(filepath.Join(r.dir, rel)) // what stays, the next start deletes
	}
	lock.Truncate(0)
	return true
}

// emptyTrashLater hands the trees of ins, in the trash and recorded as removed, to a child
// that deletes them (RunTrashChild), and reports whether it could.
func (r *Root) emptyTrashLater(ins []db.Intent) bool {
	if len(ins) == 0 || r.lock == nil || !detachable.Load() {
		return len(ins) == 0
	}
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	args := []string{exe, r.dir}
	for _, in := range ins {
		args = append(args, in.Staging)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return false
	}
	defer null.Close()
	cmd := &exec.Cmd{Path: exe, Args: args, Env: append(os.Environ(), trashChildEnv+"=1"),
		Stdin: null, Stdout: null, Stderr: null, ExtraFiles: []*os.File{r.lock},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}} // out of the terminal's reach: Ctrl-C stops the command, not this
	if cmd.Start() != nil {
		return false
	}
	cmd.Process.Release()
	r.handed = true
	return true
}
