package install

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// made is what Open made of a root: the directories its path lacked (MkdirAll's), the
// root first, and the directories of the layout it made (openLayout's).
type made struct {
	dirs  []string
	parts []part // of meta, staging, trash, pkgs and bin
}

// missing returns the directories of the path dir, absolute, that are not there, dir
// first: those Open's MkdirAll would make.
func missing(dir string) []string {
	var dirs []string
	for p := dir; p != filepath.Dir(p); p = filepath.Dir(p) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		dirs = append(dirs, p)
	}
	return dirs
}

// unmake takes away, best effort, what Open made of the root r holds locked and empty (no
// database): bin/ and pkgs/ where empty; .pkg where it holds no more than Open made, the
// lock, staging and trash, all empty, first renamed to goneMeta so that a command waiting
// for the lock finds it gone from its path and opens the root anew (lockRoot), and one
// coming after makes its own; then the directories of the root's path it made, while
// empty. rmdir(2) removes no directory another command has put anything in since.
func (r *Root) unmake() {
	for _, p := range []part{bin, pkgs} {
		if slices.Contains(r.made.parts, p) {
			unix.Unlinkat(r.fd[top], partRel(p), unix.AT_REMOVEDIR)
		}
	}
	if slices.Contains(r.made.parts, meta) && r.onlyMade() {
		if unix.Renameat(r.fd[top], ".pkg", r.fd[top], goneMeta) == nil {
			removeGone(r.fd[top])
		}
	}
	for _, d := range r.made.dirs {
		if unix.Rmdir(d) != nil {
			return
		}
	}
}

// goneMeta is where unmake renames the .pkg it takes away, before it empties and removes it.
const goneMeta = ".pkg.gone"

// removeGone removes, best effort, goneMeta beneath the root's descriptor top, and what
// unmake leaves in it: the lock and the empty staging and trash. A crash of unmake between
// its rename and this leaves it; the next Open that makes .pkg again removes it, and
// nothing that holds anything else.
func removeGone(top int) {
	fd, err := unix.Openat(top, goneMeta, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	unix.Unlinkat(fd, "staging", unix.AT_REMOVEDIR)
	unix.Unlinkat(fd, "trash", unix.AT_REMOVEDIR)
	unix.Unlinkat(fd, "lock", 0)
	unix.Close(fd)
	unix.Unlinkat(top, goneMeta, unix.AT_REMOVEDIR)
}

// onlyMade reports whether .pkg holds its lock and its staging and trash directories,
// empty, and nothing else.
func (r *Root) onlyMade() bool {
	names, err := r.names(place{meta, ""})
	if err != nil {
		return false
	}
	for _, n := range names {
		switch n {
		case "lock":
		case "staging", "trash":
			if inside, err := r.names(place{meta, n}); err != nil || len(inside) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
