package crash

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"pkg/internal/testfs"
	"time"
)

// TestInterrupt stops pkg install in the middle of a download: with SIGINT it exits 130
// saying so and leaves the root and the database as they were, and the cache but for the
// bytes of the archive that came (tmp/part-SHA256); killed, it leaves its partial tar too,
// which the next command that opens the cache removes once the file is an orphan, while the
// archive's bytes stay: the next install asks for the rest from where they end.
func TestInterrupt(t *testing.T) {
	repoDir := t.TempDir()
	publish(t, repoDir, appSpec("app", "1", 300))
	halfSent := make(chan struct{}, 1)
	var whole atomic.Bool // serve the archive, and ranges of it
	var half atomic.Int64 // bytes of the archive sent, when not whole
	var size atomic.Int64 // of the archive
	var mu sync.Mutex
	var ranges []string // asked for while whole
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".tar.gz") {
			http.FileServer(http.Dir(repoDir)).ServeHTTP(rw, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(repoDir, filepath.Base(r.URL.Path)))
		if err != nil {
			http.NotFound(rw, r)
			return
		}
		if whole.Load() {
			mu.Lock()
			ranges = append(ranges, r.Header.Get("Range"))
			mu.Unlock()
			http.ServeContent(rw, r, "", time.Time{}, bytes.NewReader(data))
			return
		}
		half.Store(int64(len(data) / 2))
		size.Store(int64(len(data)))
		rw.Header().Set("Content-Length", strconv.Itoa(len(data)))
		rw.Write(data[:len(data)/2])
		rw.(http.Flusher).Flush()
		halfSent <- struct{}{}
		<-r.Context().Done() // the rest never comes
	}))
	defer srv.Close()
	base := t.TempDir()
	e := &env{t: t, bin: testfs.PkgBinary(t), root: filepath.Join(base, "root"), cache: filepath.Join(base, "cache"), repo: srv.URL}
	tmpDir := filepath.Join(e.cache, "tmp")

	// interrupted runs pkg install app until half the archive is sent, then sends it sig.
	interrupted := func(sig syscall.Signal) (stderr string, code int) {
		var er bytes.Buffer
		c := e.command("--quiet", "install", "app")
		c.Stderr = &er
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-halfSent:
		case <-time.After(time.Minute):
			t.Fatal("the download did not start")
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if len(downloads(tmpDir)) > 0 && kept(tmpDir) == half.Load() {
				break // the download is being written, and all that came is kept
			}
			if time.Now().After(deadline) {
				c.Process.Kill()
				t.Fatal("half the archive was sent, but no download was written in a minute")
			}
		}
		c.Process.Signal(sig)
		c.Wait()
		return er.String(), c.ProcessState.ExitCode()
	}

	if stderr, code := interrupted(syscall.SIGINT); code != 130 || !strings.HasSuffix(stderr, "pkg: interrupted\n") {
		t.Errorf("after SIGINT: exit %d, stderr %q; want 130 and 'pkg: interrupted'", code, stderr)
	}
	if ents, _ := os.ReadDir(tmpDir); len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "part-") {
		t.Errorf("after SIGINT the cache holds %v, want the archive's bytes that came alone", names(ents))
	}
	if _, err := os.Lstat(e.root); !errors.Is(err, fs.ErrNotExist) { // a first install's: taken away
		t.Errorf("after SIGINT, the root: %v; want none", err)
	}

	if _, code := interrupted(syscall.SIGKILL); code != -1 {
		t.Errorf("after SIGKILL: exit %d", code)
	}
	// The partial tar, and the digests file written beside it as members pass.
	ents := downloads(tmpDir)
	if tars := slices.DeleteFunc(slices.Clone(ents), func(e os.DirEntry) bool { return !strings.HasSuffix(e.Name(), ".tar") }); len(tars) != 1 || len(ents) > 2 {
		t.Fatalf("after SIGKILL the cache holds %v, want the partial download (and its digests)", names(ents))
	}
	parts := partials(tmpDir)
	if len(parts) != 1 {
		t.Fatalf("after SIGKILL the cache holds %v, want the archive's bytes that came", names(parts))
	}
	// Interrupted while it waits for the root's lock, pkg stops at once.
	lock, err := os.OpenFile(filepath.Join(e.root, ".pkg", "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	c := e.command("--lock-timeout", "30s", "install", "app") // gives up, not hangs, if it never says it waits
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for sc := bufio.NewScanner(stderr); sc.Scan(); { // until pkg says it waits
		if lines = append(lines, sc.Text()); waitingLine.MatchString(sc.Text()) {
			c.Process.Signal(syscall.SIGINT)
		}
	}
	c.Wait()
	if code := c.ProcessState.ExitCode(); code != 130 || len(lines) < 2 || lines[len(lines)-1] != "pkg: interrupted" ||
		!waitingLine.MatchString(lines[len(lines)-2]) {
		t.Errorf("SIGINT while waiting for the lock: exit %d, stderr %q", code, lines)
	}
	lock.Close()

	old := time.Now().Add(-2 * time.Minute)
	all, _ := os.ReadDir(tmpDir) // the download, and the lock that claimed it (fetch-SHA256)
	for _, ent := range all {
		os.Chtimes(filepath.Join(tmpDir, ent.Name()), old, old)
	}
	e.ok("cache", "list")
	if ents := downloads(tmpDir); len(ents) != 0 {
		t.Errorf("the orphaned download survived the next command: %v", names(ents))
	}
	info, err := parts[0].Info()
	if err != nil {
		t.Fatalf("the archive's bytes kept are gone after the next command: %v", err)
	}
	whole.Store(true)
	e.ok("install", "app")
	mu.Lock()
	defer mu.Unlock()
	if want := "bytes=" + strconv.FormatInt(half.Load(), 10) + "-" + strconv.FormatInt(size.Load()-1, 10); info.Size() != half.Load() || len(ranges) != 1 || ranges[0] != want {
		t.Errorf("archive requests of the install after the kill, %d bytes kept: Range %q, want one, %q", info.Size(), ranges, want)
	}
	if ents, _ := os.ReadDir(tmpDir); len(ents) != 0 {
		t.Errorf("after the install the cache holds %v", names(ents))
	}
}

func names(ents []os.DirEntry) []string {
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	return s
}

// downloads lists the downloads being written in the cache's tmp/, leaving out the locks
// that claim them (fetch-SHA256) and the archives' bytes kept (part-SHA256).
func downloads(tmpDir string) []os.DirEntry {
	ents, _ := os.ReadDir(tmpDir)
	return slices.DeleteFunc(ents, func(e os.DirEntry) bool {
		return strings.HasPrefix(e.Name(), "fetch-") || strings.HasPrefix(e.Name(), "part-")
	})
}

// kept returns the bytes of the archive kept in the cache's tmp/, or -1 for none.
func kept(tmpDir string) int64 {
	for _, e := range partials(tmpDir) {
		if info, err := e.Info(); err == nil {
			return info.Size()
		}
	}
	return -1
}

// partials lists the archives' bytes kept in the cache's tmp/ to resume their downloads.
func partials(tmpDir string) []os.DirEntry {
	ents, _ := os.ReadDir(tmpDir)
	return slices.DeleteFunc(ents, func(e os.DirEntry) bool { return !strings.HasPrefix(e.Name(), "part-") })
}
