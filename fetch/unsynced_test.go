package fetch

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestUnsyncedAfterCrash leaves a fetched entry as a crash before it was settled may (a
// fetch that knows the boot syncs nothing: the journal keeps the tar's link after the
// index's rename, and nothing of the data) and checks that the next Fetch, in another
// boot, ends with the entry whole: a damaged one is removed and fetched again.
func TestUnsyncedAfterCrash(t *testing.T) {
	if bootID() == "" {
		t.Skipf("no boot id in %s: entries are synced at fetch", bootIDFile)
	}
	dir, p := localRepo(t)
	src, err := NewSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// otherBoot rewrites the index's header as written in an earlier boot.
	otherBoot := func(idx []byte) []byte {
		line, rest, _ := strings.Cut(string(idx), "\n")
		return []byte(strings.Join(strings.Fields(line)[:5], " ") + " 00000000-0000-0000-0000-000000000000\n" + rest)
	}
	tests := []struct {
		name     string
		idx, tar func(b []byte) []byte // what the crash left of each, nil for none
	}{
		{"intact", otherBoot, keep},
		{"index-empty", func([]byte) []byte { return []byte{} }, keep},
		{"index-cut", func(b []byte) []byte { return otherBoot(b)[:len(b)/2] }, keep},
		{"index-zeros-after-header", func(b []byte) []byte {
			b = otherBoot(b)
			i := bytes.IndexByte(b, '\n') + 1
			return append(b[:i], make([]byte, len(b)-i)...)
		}, keep},
		{"index-without-tar", otherBoot, nil},
		{"tar-empty", otherBoot, func([]byte) []byte { return []byte{} }},
		{"tar-zeros", otherBoot, func(b []byte) []byte { return make([]byte, len(b)) }},
		{"tar-data-zeros", otherBoot, func(b []byte) []byte {
			b = bytes.Clone(b)
			clear(b[4096 : len(b)-1024]) // past the first header, before the end blocks
			return b
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := cacheOpener(t)
			c := open()
			if err := fetchOne(c, src, p); err != nil {
				t.Fatal(err)
			}
			good, err := os.ReadFile(c.Path(p.SHA256))
			if err != nil {
				t.Fatal(err)
			}
			idx, err := os.ReadFile(c.idxPath(p.SHA256))
			if err != nil {
				t.Fatal(err)
			}
			leave(t, c.idxPath(p.SHA256), idx, tt.idx)
			leave(t, c.Path(p.SHA256), good, tt.tar)
			c = open()
			if err := fetchOne(c, src, p); err != nil {
				t.Fatalf("Fetch after the crash: %v", err)
			}
			checkEntry(t, c, p, testFiles())
			if got, err := os.ReadFile(c.Path(p.SHA256)); err != nil || !bytes.Equal(got, good) {
				t.Errorf("tar after the crash: %d bytes (%v), want the %d fetched first", len(got), err, len(good))
			}
		})
	}
}

func keep(b []byte) []byte { return b }

// leave replaces the file at path with what crash makes of its data, or removes it.
func leave(t *testing.T, path string, data []byte, crash func([]byte) []byte) {
	t.Helper()
	if crash == nil {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, crash(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
