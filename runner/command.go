package runner

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"pkg/internal/dirfd"
)

// A run reaches everything under <cache>/run through the directory the cache opened
// beneath itself through no symlink (fetch.Cache.RunDir): its .used flock, its memo, the
// run root, made through /proc/self/fd/N of that directory, and the command it runs,
// opened beneath the run root's own descriptor, so that another user of the cache who
// puts a symlink in place of run/ or of a run root's directories makes it neither write
// nor run anything outside the cache (#30). The command is executed by its path in the
// run root only where no other user can change what that path names (ownPath), else as
// the open file. The command's PATH and a wrapper's exec still name the run root by its
// path.

// subdirIn opens the directory name of d, making it if missing; a symlink there is refused.
func subdirIn(d *os.File, name string) (*os.File, error) {
	if err := unix.Mkdirat(int(d.Fd()), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(d.Name(), name), Err: err}
	}
	return dirfd.Open(d, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// binLink returns what bin/<cmd> of the run root holds, read through no symlink: a
// symlink's target, "" for a file.
func binLink(root *os.File, cmd string) (string, error) {
	bin, err := dirfd.Open(root, "bin", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer bin.Close()
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(int(bin.Fd()), cmd, buf)
	switch {
	case errors.Is(err, unix.EINVAL): // not a symlink
		var st unix.Stat_t
		if err := unix.Fstatat(int(bin.Fd()), cmd, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return "", &os.PathError{Op: "stat", Path: filepath.Join(bin.Name(), cmd), Err: err}
		}
		return "", nil
	case err != nil:
		return "", &os.PathError{Op: "readlink", Path: filepath.Join(bin.Name(), cmd), Err: err}
	}
	return string(buf[:n]), nil
}

// openCommand opens the command cmd of the run root, bin/<cmd>, and what its link in bin/
// holds, resolving beneath root: through symlinks that stay inside the run root (a
// command's link into pkgs/, a package's own), never out of it nor through /proc's
// magic links. The file is opened to read where it can be, else only as a path.
func openCommand(root *os.File, cmd string) (*os.File, string, error) {
	link, err := binLink(root, cmd)
	if err != nil {
		return nil, "", err
	}
	name := "bin/" + cmd
	for _, flag := range []int{unix.O_RDONLY | unix.O_NONBLOCK, unix.O_PATH} {
		fd, err := openBeneath(root, name, link, flag)
		if errors.Is(err, unix.EACCES) && flag != unix.O_PATH {
			continue // a command that may be run but not read
		}
		if err != nil {
			return nil, "", &os.PathError{Op: "open", Path: filepath.Join(root.Name(), name), Err: err}
		}
		f := os.NewFile(uintptr(fd), filepath.Join(root.Name(), name))
		if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
			f.Close()
			return nil, "", &os.PathError{Op: "open", Path: f.Name(), Err: unix.EACCES}
		}
		return f, link, nil
	}
	return nil, "", unix.EACCES
}

// openBeneath opens name, bin/<cmd> of root whose link holds link, with flag, resolving
// beneath root (openat2 RESOLVE_BENEATH). Where openat2 is missing or filtered, it follows
// the link itself when it is one of pkg's into pkgs/ and opens every component with
// O_NOFOLLOW.
func openBeneath(root *os.File, name, link string, flag int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flag | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	for range 8 {
		fd, err := unix.Openat2(int(root.Fd()), name, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			return openWalk(root, name, link, flag)
		case !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR):
			return -1, err
		}
	}
	return -1, unix.EAGAIN
}

// openWalk is openBeneath without openat2.
func openWalk(root *os.File, name, link string, flag int) (int, error) {
	if link != "" {
		rel, ok := strings.CutPrefix(link, "../pkgs/")
		if !ok || !filepath.IsLocal(rel) {
			return -1, unix.EXDEV
		}
		name = "pkgs/" + rel
	}
	fd := int(root.Fd())
	elems := strings.Split(name, "/")
	for i, elem := range elems {
		f := unix.O_PATH | unix.O_DIRECTORY
		if i == len(elems)-1 {
			f = flag
		}
		next, err := unix.Openat(fd, elem, f|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if fd != int(root.Fd()) {
			unix.Close(fd)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// interpreted reports whether the open command f is a script ("#!"), which its
// interpreter opens again by the path it is run as: f must then stay open across exec.
// A command opened only as a path counts as one.
func interpreted(f *os.File) bool {
	b := make([]byte, 2)
	n, err := f.ReadAt(b, 0)
	return err != nil && n < 2 || string(b[:n]) == "#!"
}

// ownPath reports whether the absolute path names the file f and nobody but this
// process's user and root can make it name another: every directory its resolution
// passes through is theirs and writable by no one else, or sticky (/tmp) with the entry
// taken from it theirs, as OpenSSH's safe_path checks a key's path. Executing path then
// runs f, and a script's interpreter, which opens path again, reads f.
func ownPath(path string, f *os.File) bool {
	var want unix.Stat_t
	if !filepath.IsAbs(path) || unix.Fstat(int(f.Fd()), &want) != nil {
		return false
	}
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	dirs := []int{root} // the directories resolved so far, the last the current one
	defer func() {
		for _, d := range dirs {
			unix.Close(d)
		}
	}()
	uid := uint32(os.Geteuid())
	ours := func(st *unix.Stat_t) bool { return st.Uid == uid || st.Uid == 0 }
	todo := strings.Split(path, "/")
	for links := 0; len(todo) > 0; {
		name, dir := todo[0], dirs[len(dirs)-1]
		todo = todo[1:]
		switch {
		case name == "" || name == ".":
			continue
		case name == "..":
			if len(dirs) > 1 {
				unix.Close(dir)
				dirs = dirs[:len(dirs)-1]
			}
			continue
		}
		var d, st unix.Stat_t
		if unix.Fstat(dir, &d) != nil || unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return false
		}
		if !ours(&d) || d.Mode&0o022 != 0 && (d.Mode&unix.S_ISVTX == 0 || !ours(&st)) {
			return false // someone else can put another file at name
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			buf := make([]byte, unix.PathMax)
			n, err := unix.Readlinkat(dir, name, buf)
			if links++; err != nil || links > 40 { // the kernel's limit (ELOOP)
				return false
			}
			target := string(buf[:n])
			if filepath.IsAbs(target) {
				for _, d := range dirs[1:] {
					unix.Close(d)
				}
				dirs = dirs[:1]
			}
			todo = append(strings.Split(target, "/"), todo...)
		case unix.S_IFDIR:
			next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return false
			}
			dirs = append(dirs, next)
		default:
			return len(todo) == 0 && st.Dev == want.Dev && st.Ino == want.Ino
		}
	}
	return false
}

// writeMemo writes b as name in the directory d, by rename, never through a symlink.
func writeMemo(d *os.File, name string, b []byte) error {
	tmp := ".new-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
	f, err := dirfd.Open(d, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(int(d.Fd()), tmp, int(d.Fd()), name)
	}
	if err != nil {
		unix.Unlinkat(int(d.Fd()), tmp, 0)
	}
	return err
}
