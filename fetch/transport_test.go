package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"pkg/repo"
	"pkg/trust"
)

// memRepo is a remote location held in memory: what a Source does above its transport
// (failover, resuming, believing an index, the cache's claims) is tested through it,
// without a server.
type memRepo struct {
	name string

	mu    sync.Mutex
	files map[string][]byte // by path beneath the location: index.json, archives
	down  error             // if not nil, every request fails with it
	cut   int64             // if > 0, a body fails after this many bytes, once
	opens []int64           // the offset each open of an archive asked for
	gate  chan struct{}     // if not nil, an open of an archive waits until it is closed
}

var _ transport = (*memRepo)(nil)

// errCut is a body broken off, as a dropped connection's is; it is ErrUnreachable.
var errCut = &giveUpError{io.ErrUnexpectedEOF, 1}

func newMemRepo(name string, files map[string][]byte) *memRepo {
	return &memRepo{name: name, files: files}
}

func (m *memRepo) url() string                  { return "mem://" + m.name + "/" }
func (m *memRepo) indexLocation() string        { return m.archiveURL("index.json") }
func (m *memRepo) archiveURL(rel string) string { return m.url() + rel }
func (m *memRepo) remote() bool                 { return true }
func (m *memRepo) checkRepository() error       { return nil }

func (m *memRepo) get(rel string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down != nil {
		return nil, m.down
	}
	data, ok := m.files[rel]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return data, nil
}

func (m *memRepo) readIndex(_ context.Context, _ *savedIndex, _ int) (*savedIndex, string, error) {
	where := m.indexLocation()
	data, err := m.get("index.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, where, &noRepository{m.url(), "no index.json"}
	}
	return &savedIndex{Location: where, data: data}, where, err
}

func (m *memRepo) readSignature(context.Context, int) ([]byte, error) {
	sig, err := m.get(repo.SignatureName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return sig, err
}

func (m *memRepo) open(_ context.Context, rel, _ string, _, off int64, _ bool, _ int) (body, error) {
	m.mu.Lock()
	m.opens = append(m.opens, off)
	m.mu.Unlock()
	if m.gate != nil {
		<-m.gate
	}
	data, err := m.get(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, gone{err}
	} else if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := &memBody{r: bytes.NewReader(data[off:]), off: off, where: m.archiveURL(rel), cut: m.cut}
	m.cut = 0
	return b, nil
}

func (m *memRepo) opened() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.opens)
}

// memBody is an archive's bytes from off on, broken off after cut bytes if cut > 0.
type memBody struct {
	r     *bytes.Reader
	off   int64
	where string
	cut   int64
	n     int64
}

func (b *memBody) Read(p []byte) (int, error) {
	if b.cut > 0 {
		if b.n >= b.cut {
			return 0, errCut
		}
		p = p[:min(int64(len(p)), b.cut-b.n)]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *memBody) Close() error { return nil }

func (b *memBody) start() int64 { return b.off }

func (b *memBody) from() string { return b.where }

// memSource returns a source of the locations ms, the first the repository, the others
// its mirrors, that waits a millisecond between attempts.
func memSource(o Options, ms ...*memRepo) *Source {
	n := newNetConfig(nil)
	n.backoff = time.Millisecond
	locs := make([]location, len(ms))
	for i, m := range ms {
		locs[i] = location{m.url(), m}
	}
	s := newSource(locs[0], o, n)
	if len(locs) > 1 {
		s.m = newMirrors(locs, o.Failover)
	}
	return s
}

// TestMemFailover reads a signed index and its archive from the second location when the
// first is down, names the first in the result and says so once; the next source of the
// cache asks the second first, from the record the first left in the cache.
func TestMemFailover(t *testing.T) {
	key := newTestKey(t)
	archive, p := testArchive(t)
	index, sig := signedIndex(t, key, 2, time.Now().Add(time.Hour), p)
	files := map[string][]byte{"index.json": index, repo.SignatureName: sig, p.Archive: archive}
	a, b := newMemRepo("a", files), newMemRepo("b", files)
	a.down = errCut
	var n notes
	o := trustedBy(key)
	o.Failover = n.failover
	c := openCache(t)
	s := memSource(o, a, b)
	_, res, err := c.VerifiedIndex(t.Context(), s)
	if err != nil || !res.Verified() || res.Location != a.url() {
		t.Fatalf("VerifiedIndex: %+v, %v; want verified as %s", res, err, a.url())
	}
	if _, err := c.Fetch(t.Context(), s, p, nil); err != nil {
		t.Fatal(err)
	}
	if got := b.opened(); len(got) != 1 || len(a.opened()) != 0 {
		t.Errorf("archive opened %v at b, %v at a; want once at b", got, a.opened())
	}
	if n.len() != 1 || n.to[0] != b.url() || !errors.Is(n.why[0], ErrUnreachable) {
		t.Errorf("failovers said: %v %v", n.to, n.why)
	}
	if order := memSource(o, a, b).m.order(c); order[0] != 1 {
		t.Errorf("a new source asks %v, want b (1) first", order)
	}
}

// TestMemFailoverMidBody reads the rest of an archive from the mirror when the first
// location breaks off in the middle, asking it from the byte it stopped at.
func TestMemFailoverMidBody(t *testing.T) {
	archive, p := testArchive(t)
	files := map[string][]byte{p.Archive: archive}
	a, b := newMemRepo("a", files), newMemRepo("b", files)
	cut := int64(len(archive) / 3)
	a.cut = cut
	c := openCache(t)
	if _, err := c.Fetch(t.Context(), memSource(Options{}, a, b), p, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := b.opened(), []int64{cut}; !slices.Equal(got, want) {
		t.Errorf("mirror asked from %v, want %v", got, want)
	}
}

// TestMemRefusedMidBody refuses an archive whose first bytes came from a location that
// broke off and its rest from the next: the first is refused, and the next asked for all
// of it; when that one's are refused too, the error names both.
func TestMemRefusedMidBody(t *testing.T) {
	archive, p := testArchive(t)
	other := bytes.Clone(archive)
	other[10] ^= 1
	cut := int64(len(archive) / 3)
	a := newMemRepo("a", map[string][]byte{p.Archive: other})
	b := newMemRepo("b", map[string][]byte{p.Archive: archive})
	a.cut = cut
	var n notes
	c := openCache(t)
	if _, err := c.Fetch(t.Context(), memSource(Options{Failover: n.failover}, a, b), p, nil); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if got, want := b.opened(), []int64{cut, 0}; !slices.Equal(got, want) || len(a.opened()) != 1 {
		t.Errorf("opened from %v at a, %v at b; want once at a, then %v at b", a.opened(), got, want)
	}

	a.cut = cut
	b.files[p.Archive] = other
	c = openCache(t)
	_, err := c.Fetch(t.Context(), memSource(Options{}, a, b), p, nil)
	if got := mirrorsOf(err); !errors.Is(err, ErrMismatch) || !slices.Equal(slices.Sorted(slices.Values(got)), []string{a.url(), b.url()}) {
		t.Errorf("Fetch: %v; want ErrMismatch naming a and b", err)
	}
	checkEmpty(t, c)
}

// TestMemResume keeps the bytes of a download broken off, and the next fetch asks only
// for the rest; what it kept goes once the entry is in the cache.
func TestMemResume(t *testing.T) {
	archive, p := testArchive(t)
	if p.Size < partialMin {
		t.Fatalf("test archive of %d bytes is too small to be kept", p.Size)
	}
	m := newMemRepo("a", map[string][]byte{p.Archive: archive})
	half := int64(len(archive) / 2)
	m.cut = half
	c := openCache(t)
	s := memSource(Options{}, m)
	s.tries = 1
	if err := fetchOne(c, s, p); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("cut fetch: %v, want ErrUnreachable", err)
	}
	if info, err := os.Stat(partialPath(c, p.SHA256)); err != nil || info.Size() != half {
		t.Fatalf("kept %v, %v; want %d bytes", info, err, half)
	}
	if err := fetchOne(c, s, p); err != nil {
		t.Fatal(err)
	}
	checkEntry(t, c, p, testFiles())
	if got, want := m.opened(), []int64{0, half}; !slices.Equal(got, want) {
		t.Errorf("opened from %v, want %v", got, want)
	}
	if _, err := os.Stat(partialPath(c, p.SHA256)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("partial download left after the entry: %v", err)
	}
}

// TestMemResumeMismatch fetches an archive once more from its first byte when the one
// resumed from kept bytes is not the index's, and refuses it when that is not either.
func TestMemResumeMismatch(t *testing.T) {
	archive, p := testArchive(t)
	other := bytes.Clone(archive)
	other[len(other)-100] ^= 1
	m := newMemRepo("a", map[string][]byte{p.Archive: archive})
	m.cut = int64(len(archive) / 2)
	c := openCache(t)
	s := memSource(Options{}, m)
	s.tries = 1
	fetchOne(c, s, p)
	m.mu.Lock()
	m.files[p.Archive] = other
	m.mu.Unlock()
	if err := fetchOne(c, s, p); !errors.Is(err, ErrMismatch) {
		t.Fatalf("fetch of other bytes: %v, want ErrMismatch", err)
	}
	if got, want := m.opened(), []int64{0, int64(len(archive) / 2), 0}; !slices.Equal(got, want) {
		t.Errorf("opened from %v, want %v", got, want)
	}
	checkEmpty(t, c)
}

// TestMemClaims fetches one archive from several caches of one directory at once: one
// opens it and holds it open until the others wait for its claim, then they find the
// entry without opening it.
func TestMemClaims(t *testing.T) {
	archive, p := testArchive(t)
	m := newMemRepo("a", map[string][]byte{p.Archive: archive})
	m.gate = make(chan struct{})
	open := cacheOpener(t)
	errs := make([]error, 4)
	waiting := make(chan struct{}, len(errs))
	var wg sync.WaitGroup
	for i := range errs {
		c := open()
		var once sync.Once
		c.Waiting = func(repo.Package, []int) { once.Do(func() { waiting <- struct{}{} }) }
		wg.Go(func() { errs[i] = fetchOne(c, memSource(Options{}, m), p) })
	}
	waited, timeout := 0, time.After(10*time.Second)
wait:
	for waited < len(errs)-1 {
		select {
		case <-waiting:
			waited++
		case <-timeout:
			break wait
		}
	}
	close(m.gate)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := m.opened(); len(got) != 1 || waited != len(errs)-1 {
		t.Errorf("opened %d times with %d fetches waiting for the claim, want once with %d", len(got), waited, len(errs)-1)
	}
}

// TestMemPinned refuses an unsigned index of a repository whose copy in the cache a
// trusted key verified, and keeps that copy.
func TestMemPinned(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	index, sig := signedIndex(t, key, 2, time.Now().Add(time.Hour), p)
	m := newMemRepo("a", map[string][]byte{"index.json": index, repo.SignatureName: sig})
	c := openCache(t)
	signed := memSource(trustedBy(key), m)
	if _, _, err := c.VerifiedIndex(t.Context(), signed); err != nil {
		t.Fatal(err)
	}
	kept := savedBytes(c, signed)
	if len(kept) == 0 {
		t.Fatal("the verified index was not kept")
	}
	m.mu.Lock()
	delete(m.files, repo.SignatureName)
	m.mu.Unlock()
	s := memSource(Options{Trust: trust.Policy{}}, m)
	_, _, err := c.VerifiedIndex(t.Context(), s)
	if pe := (*trust.PinnedError)(nil); !errors.As(err, &pe) || pe.Version != 2 {
		t.Fatalf("unsigned index: %v, want a *trust.PinnedError of version 2", err)
	}
	if !bytes.Equal(savedBytes(c, s), kept) {
		t.Error("the verified copy was replaced")
	}
}

// TestMemStaleMirror refuses an index older than the cache's copy from the first
// location, naming it, and takes the next mirror's: a mirror can withhold, not roll back.
func TestMemStaleMirror(t *testing.T) {
	key := newTestKey(t)
	_, p := testArchive(t)
	later := time.Now().Add(time.Hour)
	v2, v2sig := signedIndex(t, key, 2, later, p)
	v1, v1sig := signedIndex(t, key, 1, later, p)
	a := newMemRepo("a", map[string][]byte{"index.json": v2, repo.SignatureName: v2sig})
	b := newMemRepo("b", map[string][]byte{"index.json": v2, repo.SignatureName: v2sig})
	c := openCache(t)
	if _, _, err := c.VerifiedIndex(t.Context(), memSource(trustedBy(key), a)); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	a.files["index.json"], a.files[repo.SignatureName] = v1, v1sig
	a.mu.Unlock()
	var n notes
	o := trustedBy(key)
	o.Failover = n.failover
	_, res, err := c.VerifiedIndex(t.Context(), memSource(o, a, b))
	if err != nil || res.Version != 2 {
		t.Fatalf("VerifiedIndex: version %d, %v; want 2 from b", res.Version, err)
	}
	var me *mirrorError
	if n.len() != 1 || !errors.Is(n.why[0], trust.ErrRollback) || !errors.As(n.why[0], &me) || me.URL != a.url() {
		t.Errorf("failovers said: %v %v; want a's rollback", n.to, n.why)
	}
}
