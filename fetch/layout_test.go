package fetch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/testfs"
)

// homeFiles are what a home directory given as the cache may hold, named as the cache's
// own files are.
var homeFiles = []string{"tmp/notes.txt", "tmp/backup-2024.tar", "tmp/idx-1", "tmp/fetch-" + strings.Repeat("a", 64),
	"tars/" + strings.Repeat("b", 64) + ".tar", "tars/" + strings.Repeat("c", 64) + ".idx", "tars/photos.tar", "index/x.json"}

// TestOpenNotCache opens as the cache directories that are not empty and are not pkg's
// caches: each is refused, naming it, and left as it was.
func TestOpenNotCache(t *testing.T) {
	for _, tt := range []struct {
		name string
		tag  string // CACHEDIR.TAG, if not ""
		want error
	}{
		{"home", "", errNotEmpty},
		{"another program's cache", "Signature: 8a477f597d28d172789f06886806bc55\n# created by cargo\n", errForeignTag},
		{"no signature", "# This file is a cache directory tag created by pkg.\n", errForeignTag},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testfs.OldFiles(t, dir, homeFiles...)
			if tt.tag != "" {
				if err := os.WriteFile(filepath.Join(dir, tagName), []byte(tt.tag), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := testfs.Tree(t, dir)
			c, err := OpenCache(context.Background(), dir)
			if err == nil {
				c.Close()
			}
			var ne *notCacheError
			if !errors.Is(err, ErrNotCache) || !errors.Is(err, tt.want) || !errors.As(err, &ne) || ne.dir != dir {
				t.Errorf("OpenCache: %v; want ErrNotCache of %s: %v", err, dir, tt.want)
			}
			testfs.SameTree(t, dir, testfs.Tree(t, dir), before)
		})
	}
}

// TestOpenSymlinkedSubdir opens a cache one of whose subdirectories is a symlink to a
// directory of old files named as the cache's own: the cache is refused, naming the
// symlink, and nothing in the directory is removed.
func TestOpenSymlinkedSubdir(t *testing.T) {
	for _, sub := range subdirs {
		t.Run(sub, func(t *testing.T) {
			open := cacheOpener(t)
			c := open()
			c.Close()
			outside := t.TempDir()
			testfs.OldFiles(t, outside, "a-1.tar", "idx-2", strings.Repeat("d", 64)+".idx")
			before := testfs.Tree(t, outside)
			link := filepath.Join(c.dir, sub)
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			again, err := OpenCache(context.Background(), c.dir)
			if err == nil {
				again.Close()
			}
			if nc := (*notCacheError)(nil); !errors.Is(err, ErrNotCache) || !errors.Is(err, errSymlinked) || !errors.As(err, &nc) || nc.path != link {
				t.Errorf("OpenCache with %s a symlink: %v; want ErrNotCache: %s a symlink", sub, err, link)
			}
			testfs.SameTree(t, "the symlink's target", testfs.Tree(t, outside), before)
		})
	}
}

// TestCleanThroughSymlink puts symlinks in place of tmp/ and tars/ while the cache is open,
// as its only user, and removes everything it may: it works in the directories it opened,
// and nothing in the symlinks' targets is removed.
func TestCleanThroughSymlink(t *testing.T) {
	c := openCache(t)
	if err := c.Exclusive(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	sha := strings.Repeat("e", 64)
	testfs.OldFiles(t, outside, "a-1.tar", sha+".tar", sha+".idx")
	before := testfs.Tree(t, outside)
	for _, sub := range []string{"tmp", "tars"} {
		if err := os.Rename(filepath.Join(c.dir, sub), filepath.Join(c.dir, sub+".aside")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(c.dir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.RemoveUnfinished(); n != 0 {
		t.Errorf("RemoveUnfinished through a symlinked tmp/ = %d, want 0", n)
	}
	if removed, err := c.removeEntries(func(Entry) bool { return false }); err != nil || len(removed) != 0 {
		t.Errorf("removeEntries with a symlink in place of tars/ = %v, %v; want nothing removed", removed, err)
	}
	testfs.SameTree(t, "the symlinks' target", testfs.Tree(t, outside), before)
}

// TestNewCacheTagged opens a cache in a new directory, in an empty one, and in ones a
// killed process left half made: each becomes a cache, with pkg's CACHEDIR.TAG, and opens
// again.
func TestNewCacheTagged(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(dir string) error
	}{
		{"new", func(string) error { return nil }},
		{"new parent", func(string) error { return nil }},
		{"empty", func(dir string) error { return os.Mkdir(dir, 0o755) }},
		{"empty tag", func(dir string) error { return writeIn(dir, tagName, "") }},
		{"part of the tag", func(dir string) error { return writeIn(dir, tagName, cacheTag[:20]) }},
		{"tag only", func(dir string) error { return writeIn(dir, tagName, cacheTag) }},
		// Another process made tars/ after this one read the start of its tag.
		{"part of the tag, then tars", func(dir string) error {
			if err := writeIn(dir, tagName, cacheTag[:20]); err != nil {
				return err
			}
			return os.Mkdir(filepath.Join(dir, "tars"), 0o755)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			if tt.name == "new parent" {
				dir = filepath.Join(dir, "pkg")
			}
			if err := tt.setup(dir); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				c, err := OpenCache(context.Background(), dir)
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			if b, err := os.ReadFile(filepath.Join(dir, tagName)); err != nil || string(b) != cacheTag ||
				!strings.HasPrefix(string(b), "Signature: 8a477f597d28d172789f06886806bc55\n#") {
				t.Errorf("CACHEDIR.TAG: %q, %v; want %q", b, err, cacheTag)
			}
			for _, sub := range subdirs {
				if info, err := os.Lstat(filepath.Join(dir, sub)); err != nil || !info.IsDir() {
					t.Errorf("%s: %v", sub, err)
				}
			}
		})
	}
}

func writeIn(dir, name, data string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
}

// TestRemoveOnlyOwn fills a cache's tmp/ and tars/ with old files that pkg does not name
// so: opening it, removing every entry and every unfinished download keeps them all.
func TestRemoveOnlyOwn(t *testing.T) {
	c := openCache(t)
	testfs.OldFiles(t, c.dir, "tmp/notes.txt", "tmp/a.tar", "tmp/_a-1.tar", "tmp/-1", "tmp/x-1.tar.gz", "tmp/fetch-abc",
		"tars/photos.tar", "tars/"+strings.Repeat("A", 64)+".tar", "tars/00.idx", "tars/"+strings.Repeat("f", 64)+".tar.bak")
	if err := os.Symlink("/nonexistent", filepath.Join(c.dir, "tmp", "b-1.tar")); err != nil {
		t.Fatal(err)
	}
	before := testfs.Tree(t, c.dir)
	again, err := OpenCache(context.Background(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if err := c.Exclusive(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if removed, err := c.removeEntries(func(Entry) bool { return false }); err != nil || len(removed) != 0 {
		t.Errorf("removeEntries = %v, %v; want nothing removed", removed, err)
	}
	if n := c.RemoveUnfinished(); n != 0 {
		t.Errorf("RemoveUnfinished = %d, want 0", n)
	}
	testfs.SameTree(t, "cache", testfs.Tree(t, c.dir), before)
}

func TestOwnTemp(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"fetch-" + strings.Repeat("0a", 32), true},
		{"hello-123.tar", true},
		{"lib.so+x-4294967295.tar", true},
		{"idx-1", true},
		{strings.Repeat("ab", 32) + ".json-77", true},
		{"0123456789abcdef-5", true},
		{"fetch-" + strings.Repeat("0A", 32), false},
		{"fetch-abc", false},
		{"hello.tar", false},
		{"hello-.tar", false},
		{"-1.tar", false},
		{"Hello-1.tar", true}, // an old npm name: JSONStream
		{"_hello-1.tar", false},
		{"hello-1a.tar", false},
		{"hello-1.tar.gz", false},
		{"notes.txt", false},
	} {
		if got := ownTemp(tt.name); got != tt.want {
			t.Errorf("ownTemp(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestMakeCacheTagFIFO makes a cache whose CACHEDIR.TAG became a FIFO after it was read
// (the cache's owner may put one there while root makes the cache): makeCache refuses
// it, as readTag would, instead of waiting in open for a reader that never comes.
func TestMakeCacheTagFIFO(t *testing.T) {
	dir := t.TempDir()
	tag := filepath.Join(dir, tagName)
	if err := unix.Mkfifo(tag, 0o644); err != nil {
		t.Fatal(err)
	}
	use, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer use.Close()
	done := make(chan error, 1)
	go func() { done <- makeCache(use, dir, nil, cacheOwner{}) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotCache) || !strings.Contains(err.Error(), tagName+" is not a regular file") {
			t.Errorf("makeCache with a FIFO for its tag: %v, want its %s refused as not a regular file", err, tagName)
		}
	case <-time.After(10 * time.Second):
		os.OpenFile(tag, os.O_RDONLY|unix.O_NONBLOCK, 0) // unblocks the open
		t.Fatal("makeCache with a FIFO for its tag still waiting after 10 s")
	}
}
