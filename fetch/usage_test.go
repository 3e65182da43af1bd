package fetch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/regfile"
	"pkg/internal/testfs"
	"pkg/repo"
)

const day = 24 * time.Hour

// agedCache returns a cache of four entries of the same size, a to d, last used 40, 20,
// 10 and 0 days ago, and their index entries.
func agedCache(t *testing.T) (*Cache, map[string]repo.Package) {
	c := openCache(t)
	dir := t.TempDir()
	s := quick(t, dir)
	ps := make(map[string]repo.Package)
	for i, name := range []string{"a", "b", "c", "d"} {
		files := []file{{"share/" + name, randomData(uint64(20+i), 256<<10)}}
		archive := gzipped(t, makeTar(t, files))
		p := entry(name, archive, files)
		if err := os.WriteFile(dir+"/"+p.Archive, archive, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fetchOne(c, s, p); err != nil {
			t.Fatal(err)
		}
		used := time.Now().Add(-[]time.Duration{40 * day, 20 * day, 10 * day, 0}[i])
		if err := os.Chtimes(c.Path(p.SHA256), used, used); err != nil {
			t.Fatal(err)
		}
		ps[name] = p
	}
	return c, ps
}

// TestTrim: entries a root uses are kept whatever the limits; of the others, those unused
// for longer than --older-than go, then the least recently used until the cache is under
// --max-size; without limits, all of them.
func TestTrim(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    Limits
		size float64 // MaxSize, as a fraction of the cache's size before
		keep string  // entries a root uses
		want []string
	}{
		{name: "older than 15 days", l: Limits{OlderThan: 15 * day}, want: []string{"a", "b"}},
		{name: "recent ones kept", l: Limits{OlderThan: 60 * day}, want: nil},
		{name: "oldest first under max-size", size: 0.55, want: []string{"a", "b"}},
		{name: "the oldest in use", size: 0.55, keep: "a", want: []string{"b", "c"}},
		{name: "age then size", l: Limits{OlderThan: 15 * day}, size: 0.3, want: []string{"a", "b", "c"}},
		{name: "all in use", size: 0.1, keep: "abcd", want: nil},
		{name: "no limits", keep: "d", want: []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ps := agedCache(t)
			es, err := c.List()
			if err != nil {
				t.Fatal(err)
			}
			before := c.usage(es).total
			if tc.size > 0 {
				tc.l.MaxSize = int64(tc.size * float64(before))
			}
			keep := func(e Entry) bool { return slices.Contains([]byte(tc.keep), e.Name[0]) }
			got, err := c.Trim(tc.l, keep)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range got.Removed {
				names = append(names, e.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("Trim(%+v) removed %v, want %v", tc.l, names, tc.want)
			}
			for name, p := range ps {
				if gone := slices.Contains(tc.want, name); c.Has(p.SHA256) == gone {
					t.Errorf("after Trim, %s cached: %v", name, !gone)
				}
			}
			es, _ = c.List()
			if after := c.usage(es).total; got.Size != after || got.Freed != before-after || (len(tc.want) > 0) != (got.Freed > 0) {
				t.Errorf("Trim says %d bytes freed, %d left; measured %d before, %d after", got.Freed, got.Size, before, after)
			}
			if tc.l.MaxSize > 0 && got.Size > tc.l.MaxSize && tc.keep != "abcd" {
				t.Errorf("Trim left %d bytes, over the limit of %d", got.Size, tc.l.MaxSize)
			}
		})
	}
}

// TestTrimShared: blocks that versions of a package share count once, and removing the
// oldest frees only what it does not share.
func TestTrimShared(t *testing.T) {
	for _, kind := range []string{"xfs", "btrfs"} {
		t.Run(kind, func(t *testing.T) {
			c := shareCache(t, kind)
			dir, ps := sharedRepo(t, versions())
			s := quick(t, dir)
			var each int64 // the blocks of the tars, counted apart
			for i, p := range ps {
				if err := fetchOne(c, s, p); err != nil {
					t.Fatal(err)
				}
				used := time.Now().Add(-time.Duration(len(ps)-i) * day)
				if err := os.Chtimes(c.Path(p.SHA256), used, used); err != nil {
					t.Fatal(err)
				}
			}
			es, _ := c.List()
			for _, e := range es {
				each += allocated(c.tars, tarName(e.SHA256)) + allocated(c.tars, idxName(e.SHA256))
			}
			total := c.usage(es).total
			if total >= each*2/3 {
				t.Errorf("usage of 3 versions sharing share/big: %d bytes, their files apart %d", total, each)
			}
			got, err := c.Trim(Limits{MaxSize: total - 1}, func(Entry) bool { return false })
			if err != nil || len(got.Removed) != 1 || got.Removed[0].SHA256 != ps[0].SHA256 {
				t.Fatalf("Trim under %d bytes: %+v, %v; want the oldest removed", total-1, got, err)
			}
			t.Logf("3 versions: %d bytes apart, %d counted once; removing the oldest freed %d", each, total, got.Freed)
			if oldest := allocated(c.tars, tarName(ps[1].SHA256)); got.Freed <= 0 || got.Freed >= oldest/2 || got.Size != total-got.Freed {
				t.Errorf("removing the oldest version freed %d bytes of a tar of %d, most of it shared; %d left of %d", got.Freed, oldest, got.Size, total)
			}
		})
	}
}

// TestMarkUsed: using a cached entry makes it recently used, writing nothing when it was
// used within useResolution.
func TestMarkUsed(t *testing.T) {
	c := openCache(t)
	archive, p := testArchive(t)
	dir := t.TempDir()
	os.WriteFile(dir+"/"+p.Archive, archive, 0o644)
	s := quick(t, dir)
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ago    time.Duration
		marked bool
	}{{40 * day, true}, {2 * useResolution, true}, {useResolution / 2, false}} {
		was := time.Now().Add(-tc.ago).Truncate(time.Second)
		if err := os.Chtimes(c.Path(p.SHA256), was, was); err != nil {
			t.Fatal(err)
		}
		if err := fetchOne(c, s, p); err != nil {
			t.Fatal(err)
		}
		es, err := c.List()
		if err != nil || len(es) != 1 {
			t.Fatal(es, err)
		}
		if marked := !es[0].Used.Equal(was); marked != tc.marked || marked && time.Since(es[0].Used) > time.Minute {
			t.Errorf("fetch of an entry used %v ago: last use %v (was %v), want marked %v", tc.ago, es[0].Used, was, tc.marked)
		}
	}
}

// TestExclusiveWaitsForUsers: while another Cache of the same directory is open, as a
// running command holds it, Exclusive waits, and the entries stay; Trim runs after.
func TestExclusiveWaitsForUsers(t *testing.T) {
	c, ps := agedCache(t)
	other, err := OpenCache(context.Background(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	waited := false
	err = c.Exclusive(t.Context(), func(pids []int) {
		waited = true
		for name, p := range ps {
			if !other.Has(p.SHA256) {
				t.Errorf("%s removed while another user holds the cache", name)
			}
		}
		other.Close()
	})
	if err != nil || !waited {
		t.Fatalf("Exclusive while another Cache is open: waited %v, %v", waited, err)
	}
	if got, err := c.Trim(Limits{}, func(Entry) bool { return false }); err != nil || len(got.Removed) != len(ps) {
		t.Errorf("Trim once the other user is done: %+v, %v", got, err)
	}
}

// TestTryExclusive: TryExclusive fails while another Cache is open, keeping a shared lock
// (a third Cache cannot be exclusive either), and succeeds once c is the only user.
func TestTryExclusive(t *testing.T) {
	c := openCache(t)
	other, err := OpenCache(context.Background(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	if only, err := c.TryExclusive(); only || err != nil {
		t.Fatalf("TryExclusive with another user: %v, %v", only, err)
	}
	other.Close()
	third, err := OpenCache(context.Background(), c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if only, err := third.TryExclusive(); only || err != nil {
		t.Errorf("TryExclusive of a third Cache while the first is open: %v, %v; want false: the first keeps its shared lock", only, err)
	}
	third.Close()
	if only, err := c.TryExclusive(); !only || err != nil {
		t.Errorf("TryExclusive as the only user: %v, %v", only, err)
	}
}

// TestShare: a share of c holds c's lock with it, so that it becomes the only user while c
// is open, and the cache stays held, to another process, until both are closed.
func TestShare(t *testing.T) {
	c := openCache(t)
	share, err := c.Share()
	if err != nil {
		t.Fatal(err)
	}
	if only, err := share.TryExclusive(); !only || err != nil {
		t.Fatalf("TryExclusive of a share while c is open: %v, %v; want true", only, err)
	}
	probe, err := os.Open(c.dir) // as another process would lock it
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	share.Close()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("lock the cache once the share is closed: %v; want EWOULDBLOCK, c holding it", err)
	}
	c.Close()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		t.Errorf("lock the cache once both are closed: %v", err)
	}
}

// TestExclusiveGivenUp: an Exclusive that gives up waiting leaves c and its shares holding
// the cache again, though flock(2) dropped their lock to try.
func TestExclusiveGivenUp(t *testing.T) {
	c := openCache(t)
	defer c.Close()
	share, err := c.Share()
	if err != nil {
		t.Fatal(err)
	}
	defer share.Close()
	other, err := OpenCache(context.Background(), c.dir) // another user, which keeps c waiting
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := share.Exclusive(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exclusive while another uses the cache: %v, want the deadline", err)
	}
	other.Close()
	probe, err := os.Open(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := unix.Flock(int(probe.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
		t.Errorf("lock the cache exclusively after the Exclusive gave up: %v; want EWOULDBLOCK, c holding it", err)
	}
}

// TestShareTemporary: a dry run's stand-in for a missing cache says so, and is not shared,
// as its Close removes it.
func TestShareTemporary(t *testing.T) {
	c, err := OpenCacheReadOnly(context.Background(), filepath.Join(t.TempDir(), "none"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Temporary() {
		t.Error("Temporary of the cache standing for a missing one: false")
	}
	if _, err := c.Share(); err == nil {
		t.Error("Share of a temporary cache: no error")
	}
	if real := openCache(t); real.Temporary() {
		t.Error("Temporary of a cache that exists: true")
	}
}

// BenchmarkMarkUsed: what recording a use costs a cached fetch, on the filesystems pkg
// clones on: "write" is the utimensat of a use an hour after the last, "skip" one within
// the hour, "fetch" a whole fetch of a cached entry already checked (the steady state).
func BenchmarkMarkUsed(b *testing.B) {
	for _, kind := range []string{"ext4", "xfs", "btrfs"} {
		b.Run(kind, func(b *testing.B) {
			c, err := OpenCache(context.Background(), filepath.Join(testfs.Mount(b, kind), "cache"))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			archive, p := testArchive(b)
			dir := b.TempDir()
			os.WriteFile(filepath.Join(dir, p.Archive), archive, 0o644)
			s := quick(b, dir)
			if err := fetchOne(c, s, p); err != nil {
				b.Fatal(err)
			}
			name := tarName(p.SHA256)
			b.Run("write", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					markUsed(c.tars, name, time.Time{})
				}
			})
			b.Run("skip", func(b *testing.B) {
				b.ReportAllocs()
				now := time.Now()
				for b.Loop() {
					markUsed(c.tars, name, now)
				}
			})
			b.Run("fetch", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := fetchOne(c, s, p); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkDiskUsage measures a cache of 100 entries of 8 members each, on XFS, as prune
// and cache list do: one FIEMAP per tar (more for a tar of over 256 extents).
func BenchmarkDiskUsage(b *testing.B) {
	c, err := OpenCache(context.Background(), filepath.Join(testfs.Mount(b, "xfs"), "cache"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	dir := b.TempDir()
	s := quick(b, dir)
	for i := range 100 {
		var files []file
		for j := range 8 {
			files = append(files, file{fmt.Sprintf("share/f%d", j), randomData(uint64(1000*i+j), 64<<10)})
		}
		archive := gzipped(b, makeTar(b, files))
		p := entry(fmt.Sprintf("p%d", i), archive, files)
		os.WriteFile(filepath.Join(dir, p.Archive), archive, 0o644)
		if err := fetchOne(c, s, p); err != nil {
			b.Fatal(err)
		}
	}
	es, err := c.List()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.DiskUsage(es)
	}
}

// TestMarkPrunedNotStamp puts a FIFO, and then a hard link to a file outside the cache, in
// the place of the prune stamp: MarkPruned refuses the FIFO at once, where its write-only
// open waited for a reader for ever, and refuses the link, as root in a user's cache, before
// it sets any time, where it set the outside file's times first.
func TestMarkPrunedNotStamp(t *testing.T) {
	c := openCache(t)
	stamp := filepath.Join(c.dir, pruneStamp)
	os.Remove(stamp)
	if err := unix.Mkfifo(stamp, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.MarkPruned() }()
	select {
	case err := <-done:
		var nr *regfile.NotRegularError
		if !errors.As(err, &nr) {
			t.Errorf("MarkPruned with a FIFO for its stamp: %v, want a *regfile.NotRegularError", err)
		}
	case <-time.After(10 * time.Second):
		unix.Open(stamp, unix.O_RDONLY|unix.O_NONBLOCK, 0) // a reader, which lets the open return
		t.Fatal("MarkPruned with a FIFO for its stamp: still blocked after 10 s")
	}
	os.Remove(stamp)
	outside := filepath.Join(t.TempDir(), "root's")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1e9, 0)
	if err := os.Chtimes(outside, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, stamp); err != nil {
		t.Fatal(err)
	}
	c.owner = nobody // root in nobody's cache
	if err := c.MarkPruned(); !errors.Is(err, errLinked) {
		t.Errorf("MarkPruned with a hard link for its stamp: %v, want %v", err, errLinked)
	}
	if info, err := os.Stat(outside); err != nil || !info.ModTime().Equal(old) {
		t.Errorf("the file linked in: %v, %v; want its mtime left at %v", info.ModTime(), err, old)
	}
}
