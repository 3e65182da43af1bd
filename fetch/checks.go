package fetch

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A spot check that passed is remembered for the rest of the boot in the cache's check
// log, checked.<boot id>.<uid>: one line per entry, "SHA256 TAR IDX\n", each file as
// "INODE.CTIME-NS.SIZE". A later process of the same user that finds its entry's tar and
// index as recorded uses the index without reading the tar again. Each user of a shared
// cache (a user and sudo pkg, say) keeps a log of their own, made 0644 and used only
// while it is theirs: another's could not be appended to, and its lines would be taken on
// another user's word. Whatever changes a file (a write, a truncation, a rename in its
// place, a chmod) changes its ctime, which no user can set, or its inode (a check of a
// file changed under checkSettle ago is not recorded); a reboot starts another log, and
// an entry marked with an earlier boot is checked whole whatever the log says. The checks
// of a command are recorded once its change has committed (Settle), so that a command
// that fails leaves the cache as it was, or, by a command that changes nothing (verify),
// once it has checked (Settle with no entry); in one write (O_APPEND): processes sharing the
// cache add lines without a lock; one cut short is ignored.
const checkLogPrefix = "checked."

// checkSettle is how old a file's ctime must be for a check of it to be recorded: more
// than the kernel clock's tick, so that any later change gives the file another ctime
// (a change in the tick of the last one may keep it, where timestamps are coarse).
const checkSettle = time.Second

// checkNow is the clock checkSettle is measured by.
var checkNow = time.Now

// maxCheckLog bounds the log read: about 20,000 entries, far more than a cache's. A
// longer log is left unread (every entry is checked) and grows no more.
const maxCheckLog = 4 << 20 // 4 MiB

// logFlags open a check log for appending, through no symlink, and without blocking on a
// FIFO put in its place (which then fails the check for a regular file).
const logFlags = unix.O_RDWR | unix.O_APPEND | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// checkLog is a Cache's view of the check log: the lines read at its first use, and the
// file open for appending, if it could be.
type checkLog struct {
	once    sync.Once
	f       *os.File                // nil when there is no log to append to
	name    string                  // the log to make at the first flush, where open found none
	pending []byte                  // lines add noted, for flush to write
	mu      sync.Mutex              // guards seen
	seen    map[string]checkedFiles // sha256 → the entry's files when it was last checked
}

// checkedFiles identifies an entry's tar and index as a spot check found them.
type checkedFiles struct{ tar, idx fileID }

// fileID is what any change of a file changes: its inode, ctime and size.
type fileID struct {
	ino, ctime, size int64
}

func idOf(info fs.FileInfo) fileID {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{ino: int64(st.Ino), ctime: st.Ctim.Nano(), size: info.Size()}
}

func (id fileID) String() string {
	return strconv.FormatInt(id.ino, 10) + "." + strconv.FormatInt(id.ctime, 10) + "." + strconv.FormatInt(id.size, 10)
}

func parseFileID(s string) (fileID, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return fileID{}, false
	}
	var v [3]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return fileID{}, false
		}
		v[i] = n
	}
	return fileID{ino: v[0], ctime: v[1], size: v[2]}, true
}

// checkLogName is the name of this boot's log of this process's user; "" where the boot
// cannot be told.
func checkLogName() string {
	if id := bootID(); id != "" && !strings.Contains(id, "/") {
		return checkLogPrefix + id + "." + strconv.Itoa(os.Geteuid())
	}
	return ""
}

// ownLog reports whether the log f is a regular file of this process's user.
func ownLog(f *os.File) (fs.FileInfo, bool) {
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return info, ok && int(st.Uid) == os.Geteuid()
}

// open reads c's log for this boot, once per Cache. A cache this process cannot write, a
// dry run's, or a log that is not a regular file of this process's user leaves no log:
// every entry is then checked. A log not there yet is made by the first flush.
func (l *checkLog) open(c *Cache) {
	l.once.Do(func() {
		l.seen = make(map[string]checkedFiles)
		name := checkLogName()
		if name == "" || c.temporary != "" || c.ReadOnly {
			return
		}
		fd, err := unix.Openat(int(c.use.Fd()), name, logFlags, 0)
		if errors.Is(err, unix.ENOENT) {
			l.name = name
			return
		}
		if err != nil {
			return
		}
		f := os.NewFile(uintptr(fd), inDir(c.use, name))
		info, ok := ownLog(f)
		if !ok || info.Size() > maxCheckLog {
			f.Close()
			return
		}
		b, err := io.ReadAll(io.LimitReader(f, maxCheckLog))
		if err != nil {
			f.Close()
			return
		}
		l.f = f
		for line := range strings.Lines(string(b)) {
			if !strings.HasSuffix(line, "\n") {
				break // cut short by a crash
			}
			if sha, files, ok := parseCheckLine(line); ok {
				l.seen[sha] = files
			}
		}
	})
}

// create makes this boot's log, where open found none, and removes the logs of earlier
// boots; another process may have made it meanwhile.
func (l *checkLog) create(c *Cache) {
	name := l.name
	l.name = ""
	fd, err := unix.Openat(int(c.use.Fd()), name, logFlags|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err == nil {
		removeCheckLogs(c.use, bootID())
	} else if errors.Is(err, unix.EEXIST) {
		fd, err = unix.Openat(int(c.use.Fd()), name, logFlags, 0)
	}
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), inDir(c.use, name))
	if _, ok := ownLog(f); !ok {
		f.Close()
		return
	}
	l.f = f
}

func parseCheckLine(line string) (string, checkedFiles, bool) {
	f := strings.Fields(line)
	if len(f) != 3 || !isSHA256(f[0]) {
		return "", checkedFiles{}, false
	}
	tar, ok1 := parseFileID(f[1])
	idx, ok2 := parseFileID(f[2])
	return f[0], checkedFiles{tar, idx}, ok1 && ok2
}

// passed reports whether the log records the entry sha as checked with its tar and index
// as they are now.
func (l *checkLog) passed(c *Cache, sha string, files checkedFiles) bool {
	l.open(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	was, ok := l.seen[sha]
	return ok && was == files && files.tar.ino != 0 && files.idx.ino != 0
}

// recorded reports whether the log has a line for the entry sha, which passed compares
// with its tar and index as they are now.
func (l *checkLog) recorded(c *Cache, sha string) bool {
	l.open(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.seen[sha]
	return ok
}

// add notes the entry sha as checked with these files, for flush to record.
func (l *checkLog) add(c *Cache, sha string, files checkedFiles) {
	l.open(c)
	settled := checkNow().Add(-checkSettle).UnixNano()
	if files.tar.ino == 0 || files.idx.ino == 0 || files.tar.ctime > settled || files.idx.ctime > settled {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[sha] == files {
		return
	}
	l.seen[sha] = files
	l.pending = append(l.pending, sha+" "+files.tar.String()+" "+files.idx.String()+"\n"...)
}

// flush appends what add noted to the log, in one write, best effort, making the log
// where there is none yet.
func (l *checkLog) flush(c *Cache) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 {
		return
	}
	if l.f == nil && l.name != "" {
		l.create(c)
	}
	if l.f != nil {
		l.f.Write(l.pending)
	}
	l.pending = nil
}

func (l *checkLog) close() {
	if l.f != nil {
		l.f.Close()
	}
}

// removeCheckLogs removes the check logs in the cache directory d but those of boot,
// every user's: those of other boots, and boot's own unread one of a pkg before a log
// per user (checked.<boot id>).
func removeCheckLogs(d *os.File, boot string) {
	names, _ := readNames(d)
	for _, name := range names {
		if strings.HasPrefix(name, checkLogPrefix) && !strings.HasPrefix(name, checkLogPrefix+boot+".") {
			unix.Unlinkat(int(d.Fd()), name, 0)
		}
	}
}
