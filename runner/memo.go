package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"pkg/fetch"
	"pkg/internal/dirfd"
	"pkg/internal/regfile"
	"pkg/repo"
)

// A run repeated while the index it was resolved from is unchanged reads only the memo
// of its request: <cache>/run/memo/<digest of the request>.json names the run root, the
// command and what its link in bin/ holds, checked before the root is reused, and what
// the files that show a change of the index (fetch.IndexFiles) were
// when it was read: a local repository's index.json and signature, as they were before the
// read, are what it resolved from for as long as they are unchanged; a remote repository's
// index, for MaxAge after the read, as long as the cache's copy of it is as that read left
// it (every read touches it); neither past the index's expiry. A run of a lockfile, which
// reads no index, is repeated so while the lockfile is unchanged. Whatever fails to
// match, Reuse says no and the run resolves again; that the memo is only a hint is why it
// is written without a sync.

// MaxAge is how long after the cache's copy of a remote repository's index was last read
// from the repository a run resolved from it is reused without reading the index again.
const MaxAge = 10 * time.Minute

// Watched is what the files that show a change of the repositories' indexes were at a
// moment.
type Watched struct {
	Files []fileState `json:"files"`
}

type fileState struct {
	Path    string `json:"path"`
	Remote  bool   `json:"remote,omitempty"` // the cache's copy of a remote repository's index
	Missing bool   `json:"missing,omitempty"`
	Ino     uint64 `json:"ino,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Mtime   int64  `json:"mtime,omitempty"` // in nanoseconds
	Ctime   int64  `json:"ctime,omitempty"`
}

// Watch returns what the files that show a change of the indexes of req's repositories
// are now, for Make: taken before the indexes are read, so that a change of a local
// repository after it shows; or, of a request with a lockfile, which reads no index,
// what the lockfile is.
func Watch(cacheDir string, req Request) Watched {
	if req.Lock != "" {
		return Watched{Files: []fileState{stateOf(req.Lock)}}
	}
	var w Watched
	for _, r := range req.Repos {
		src, err := fetch.NewSource(r.Location, fetch.Options{})
		if err != nil {
			return Watched{}
		}
		paths, remote := fetch.IndexFiles(cacheDir, src)
		for _, p := range paths {
			st := stateOf(p)
			st.Remote = remote
			w.Files = append(w.Files, st)
		}
	}
	return w
}

func stateOf(path string) fileState {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileState{Path: path, Missing: true}
	}
	return fileState{Path: path, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

// memo is a request's memo.
type memo struct {
	Set     string    `json:"set"`  // the run root's name
	Root    string    `json:"root"` // its path, which its wrappers name: a cache moved since is not reused by it
	Command string    `json:"command"`
	Link    string    `json:"link,omitempty"` // what bin/<command> held: a symlink's target, "" for a file
	Package string    `json:"package"`
	Version string    `json:"version"`
	Expires time.Time `json:"expires,omitzero"` // of the index
	Watched
}

// requestKey names the memo of req: a digest of what decides what it resolves to and
// whether its index is believed.
func requestKey(req Request) (string, error) {
	root, err := filepath.Abs(req.Root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pkg run request 2\nplatform %s\nroot %s\ncommand %q\nrequire-signed %t\n",
		repo.Host, root, req.Command, req.Trust.RequireSigned)
	for _, r := range req.Repos {
		src, err := fetch.NewSource(r.Location, fetch.Options{})
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "repo %s %s\n", r.Name, src.URL())
		for _, k := range r.Keys {
			fmt.Fprintf(&b, "repo key %s\n", k)
		}
	}
	for _, q := range req.requirements() {
		fmt.Fprintf(&b, "requirement %s\n", q)
	}
	if req.Lock != "" {
		lock, err := filepath.Abs(req.Lock)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "lock %s\n", lock)
	}
	for _, k := range req.Trust.Keys {
		fmt.Fprintf(&b, "key %s\n", k)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16]), nil
}

// remember writes the memo of req, which resolved to r, into the run directory runs,
// unless w was not taken (the repository's location could not be parsed) or the index
// changed since.
func (w Watched) remember(runs *os.File, req Request, r *Run, expires time.Time) error {
	if len(w.Files) == 0 {
		return nil
	}
	for i, f := range w.Files {
		now := stateOf(f.Path)
		now.Remote = f.Remote
		switch {
		case f.Remote:
			// The read touched the copy: it is now as this read left it, unless another
			// process read the repository since, which MaxAge bounds.
			w.Files[i] = now
		case now != f:
			return nil // changed while it was read: what it is now may not be what r holds
		}
	}
	key, err := requestKey(req)
	if err != nil {
		return err
	}
	m := memo{Set: filepath.Base(r.Root), Root: r.Root, Command: r.Command, Link: r.link, Package: r.Package.Name, Version: r.Package.Version, Expires: expires, Watched: w}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	dir, err := subdirIn(runs, "memo")
	if err != nil {
		return err
	}
	defer dir.Close()
	return writeMemo(dir, key+".json", b)
}

// maxMemo bounds a memo read: a few paths and digests.
const maxMemo = 1 << 20 // 1 MiB

// readMemo reads the memo name of the run directory runs, through no symlink, refusing
// anything but a regular file.
func readMemo(runs *os.File, name string) ([]byte, error) {
	dir, err := dirfd.Open(runs, "memo", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return readMemoIn(dir, name)
}

// readMemoIn is readMemo of the memo directory open at dir.
func readMemoIn(dir *os.File, name string) ([]byte, error) {
	f, err := dirfd.Open(dir, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := regfile.Check(f); err != nil { // a FIFO's read would wait for its writer
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMemo+1))
	if err == nil && len(b) > maxMemo {
		err = errors.New("memo too large")
	}
	return b, err
}

// Reuse returns req ready to run from the run root its memo names, if the memo holds:
// the index it was resolved from is unchanged (offline, however long ago it was read),
// and the root still has the command, as the memo recorded it. It reads the memo and
// stats a few files; it opens neither the cache's lock nor a database.
func Reuse(ctx context.Context, cacheDir string, req Request, offline bool) (*Run, bool) {
	key, err := requestKey(req)
	if err != nil {
		return nil, false
	}
	runs, err := fetch.OpenRunDir(cacheDir)
	if err != nil {
		return nil, false
	}
	defer runs.Close()
	b, err := readMemo(runs, key+".json")
	if err != nil {
		return nil, false
	}
	var m memo
	if json.Unmarshal(b, &m) != nil || !validSet(m.Set) || len(m.Files) == 0 || m.Command == "" || strings.ContainsRune(m.Command, '/') {
		return nil, false
	}
	now := time.Now()
	for _, f := range m.Files {
		st := stateOf(f.Path)
		st.Remote = f.Remote
		if st != f || f.Remote && !offline && now.Sub(time.Unix(0, f.Mtime)) > MaxAge {
			return nil, false
		}
	}
	if !offline && !m.Expires.IsZero() && now.After(m.Expires) {
		return nil, false
	}
	r := &Run{Root: filepath.Join(runs.Name(), m.Set), Command: m.Command, Package: repo.Package{Name: m.Package, Version: m.Version}}
	// The cache moved (a CI job restores it elsewhere): Make rewrites bin/. A memo written
	// before memos named their root says nothing: offline, where no new resolve can be made,
	// it is taken as it is, and online it is made again once.
	if (m.Root != "" || !offline) && r.Root != m.Root {
		return nil, false
	}
	// Not made here: a root's .used goes only after the root (Prune), and root would make
	// it root's in a user's cache, where Make hands it over.
	if r.used, err = hold(ctx, runs, m.Set+".used", false); err != nil {
		return nil, false
	}
	if err := r.open(runs, m.Set); err != nil || r.link != m.Link {
		r.Close() // damaged: Make repairs it
		return nil, false
	}
	return r, true
}

// validSet reports whether s can name a run root: setKey's hex digits.
func validSet(s string) bool {
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Exec runs the command in place of this process, with args after its name and the
// environment env, the run root's bin/ first on PATH; the command inherits the root's
// shared lock, so that the root is known to be in use until the command exits. It
// returns only if the command could not be started.
func (r *Run) Exec(args, env []string) error {
	bin := filepath.Join(r.Root, "bin")
	path := bin
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			if v != "" {
				path = bin + string(filepath.ListSeparator) + v
			}
			continue
		}
		out = append(out, e)
	}
	out = append(out, "PATH="+path)
	// The hold on the root is the flock of r.used's open file, released as its last
	// descriptor closes: the command keeps it until it exits. A script run by its
	// descriptor is opened again by its interpreter through /proc/self/fd/N: that
	// descriptor stays open across exec too.
	exe, byFD := r.execPath()
	keep := []*os.File{r.used}
	if byFD && interpreted(r.exe) {
		keep = append(keep, r.exe)
	}
	for _, f := range keep {
		if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("run %s: %w", r.path(), err)
		}
	}
	err := syscall.Exec(exe, append([]string{r.Command}, args...), out)
	for _, f := range keep {
		unix.FcntlInt(f.Fd(), unix.F_SETFD, unix.FD_CLOEXEC)
	}
	return &os.PathError{Op: "run", Path: r.path(), Err: err}
}

// execPath is the path r's command is executed by, which a script's interpreter gets as
// its $0: its path in the run root where that names the file opened beneath the run root
// for good (ownPath), else that open file's, /proc/self/fd/N (byFD).
func (r *Run) execPath() (path string, byFD bool) {
	if abs, err := filepath.Abs(r.path()); err == nil && ownPath(abs, r.exe) {
		return abs, false
	}
	return dirfd.Path(r.exe), true
}
