package fetch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"pkg/internal/testfs"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ulikunitz/xz"
)

// needXZ skips a test without xz(1), unless under CI, which installs it.
func needXZ(t testing.TB) { t.Helper(); testfs.NeedTools(t, "xz") }

// xzMulti compresses data with multi-threaded xz(1), which writes both sizes into each
// block header, in blocks of blockSize bytes of data.
func xzMulti(t testing.TB, data []byte, blockSize int, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("xz", append([]string{"-T2", "-3", "--block-size=" + strconv.Itoa(blockSize), "-c"}, args...)...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// xzBlocks returns the offsets of the blocks of a one-stream xz file whose block headers
// give their sizes, and the offset of its index.
func xzBlocks(t testing.TB, s []byte) (blocks []int, index int) {
	t.Helper()
	check := int(checkSize(s[7] & 0x0f))
	at := xzHeaderLen
	for s[at] != 0 {
		h := s[at : at+(int(s[at])+1)*4]
		comp, size, err := parseBlockHeader(h)
		if err != nil || comp < 0 || size < 0 {
			t.Fatalf("block at %d: sizes %d, %d, %v: want both sizes in its header", at, comp, size, err)
		}
		blocks = append(blocks, at)
		at += len(h) + int(comp) + int((4-comp%4)%4) + check
	}
	return blocks, at
}

// TestXZBlocks reads streams of several blocks that give their sizes, with every check
// type, as xz -T writes them, and one stream whose blocks do not fit in xzMaxBlock and
// so are decoded as they are read.
func TestXZBlocks(t *testing.T) {
	needXZ(t)
	data := somewhatRandom(3 << 20)
	streams := map[string][]byte{}
	for _, c := range []string{"none", "crc32", "crc64", "sha256"} {
		streams[c] = xzMulti(t, data, 200<<10, "--check="+c)
		if blocks, _ := xzBlocks(t, streams[c]); len(blocks) != 16 {
			t.Fatalf("check %s: %d blocks, want 16", c, len(blocks))
		}
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), (xzMaxBlock+1<<20)/16)
	s := xzMulti(t, big, xzMaxBlock+1<<20)
	s = append(append(s, 0, 0, 0, 0), xzMulti(t, data, 1<<20)...)
	eachXZDecoder(t, func(t *testing.T) {
		for c, s := range streams {
			got, err := inflateAll(s)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("check %s: %d bytes, %v", c, len(got), err)
			}
		}
		if got, err := inflateAll(s); err != nil || !bytes.Equal(got, append(big, data...)) {
			t.Errorf("a block over %d MiB, then a stream of small ones: %d bytes, %v", xzMaxBlock>>20, len(got), err)
		}
	})
}

// TestXZHostBlocks decodes each block that gives its sizes with the host's xz, one
// process a block, where there is one: it needs half the CPU of the Go decoder.
func TestXZHostBlocks(t *testing.T) {
	needXZ(t)
	xzPath, err := exec.LookPath("xz")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runs, script := filepath.Join(dir, "runs"), filepath.Join(dir, "xz")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >> "+runs+"\nexec "+xzPath+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	host := hostXZ
	defer func() { hostXZ = host }()
	hostXZ = func() string { return script }
	data := somewhatRandom(2 << 20)
	s := xzMulti(t, data, 256<<10)
	blocks, _ := xzBlocks(t, s)
	if got, err := inflateAll(s); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	log, _ := os.ReadFile(runs)
	if n := bytes.Count(log, []byte("run\n")); n != len(blocks) {
		t.Errorf("xz ran %d times for %d blocks, want once a block", n, len(blocks))
	}
}

// TestXZHostOwnGroup runs each xz in a process group of its own, streamed or a block at
// a time, so that the terminal's Ctrl-C, sent to pkg's group, reaches pkg alone, which
// says it was interrupted: an xz killed by it first made the fetch fail as a bad stream
// ("xz block 1 at byte 12: signal: interrupt", exit 1).
func TestXZHostOwnGroup(t *testing.T) {
	needXZ(t)
	xzPath, err := exec.LookPath("xz")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	groups, script := filepath.Join(dir, "groups"), filepath.Join(dir, "xz")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat /proc/$$/stat >> "+groups+"\nexec "+xzPath+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	host := hostXZ
	defer func() { hostXZ = host }()
	hostXZ = func() string { return script }
	data := somewhatRandom(1 << 20)
	cmd := exec.Command("xz", "-T1", "-c") // one block without sizes in its header: streamed
	cmd.Stdin = bytes.NewReader(data)
	streamed, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]byte{streamed, xzMulti(t, data, 256<<10)} {
		if got, err := inflateAll(s); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes, %v", len(got), err)
		}
	}
	log, _ := os.ReadFile(groups)
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("xz ran %d times, want at least twice", len(lines))
	}
	for _, line := range lines {
		f := procStat(line)
		if len(f) < 3 {
			t.Fatalf("no process group in /proc/PID/stat %q", line)
		}
		if g := f[2]; g == strconv.Itoa(syscall.Getpgrp()) {
			t.Errorf("an xz ran in pkg's process group %s, where the terminal's Ctrl-C kills it", g)
		}
	}
}

// procStat returns the fields of a /proc/PID/stat line (proc(5)) that follow the command
// name, which is in parentheses and may hold spaces and parentheses: state, ppid, pgrp, ...
func procStat(line string) []string {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(line[i+1:])
}

// TestXZHostInspectCanceled stops the inspection of a local .tar.xz once its context is
// cancelled while xz decodes it, and reaps xz: Ctrl-C reaches pkg alone (TestXZHostOwnGroup),
// which must stop xz itself rather than wait for the whole archive to be decoded.
func TestXZHostInspectCanceled(t *testing.T) {
	needXZ(t)
	xzPath, err := exec.LookPath("xz")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "big.tar.xz")
	cmd := exec.Command("xz", "-T1", "-0", "-c") // streamed: one xz decodes the whole archive
	cmd.Stdin = bytes.NewReader(makeTar(t, []file{{name: "big", data: somewhatRandom(24 << 20)}}))
	data, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(archive, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The xz the inspection starts writes its pid into started, then waits to be
	// released, so that the context is cancelled with xz running and the archive unread.
	started, release, script := filepath.Join(dir, "started"), filepath.Join(dir, "release"), filepath.Join(dir, "xz")
	for _, fifo := range []string{started, release} {
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho $$ > "+started+"\nread x < "+release+"\nexec "+xzPath+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	host := hostXZ
	defer func() { hostXZ = host }()
	hostXZ = func() string { return script }

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done, pids := make(chan error, 1), make(chan int, 1)
	go func() { _, err := Inspect(ctx, archive); done <- err }()
	go func() {
		b, _ := os.ReadFile(started)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		pids <- pid
	}()
	var pid int
	select {
	case pid = <-pids:
	case err := <-done:
		t.Fatalf("inspection ended before xz started: %v", err)
	}
	cancel()
	if err := os.WriteFile(release, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(time.Minute): // a hang: xz decodes the whole archive in a few seconds
		t.Fatal("inspection still running a minute after its context was cancelled")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("inspection cancelled while xz decodes: %v, want context.Canceled", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("xz (pid %d) is still there after the inspection returned: %v", pid, err)
	}
}

// TestXZHostOffHeap decodes blocks that give their sizes with the host's xz into files in
// memory, not the Go heap, and closes every such file once the reader is closed.
func TestXZHostOffHeap(t *testing.T) {
	needXZ(t)
	if !memFiles() {
		t.Skip("no memfd_create here")
	}
	data := bytes.Repeat([]byte("pkg fetch decodes xz blocks\n"), (16<<20)/28)
	s := xzMulti(t, data, 1<<20)
	fds := func() int { es, _ := os.ReadDir("/proc/self/fd"); return len(es) }
	before := fds()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	zr := newXZReader(bufio.NewReader(bytes.NewReader(s)))
	n, err := io.Copy(io.Discard, zr)
	runtime.ReadMemStats(&m1)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("%d bytes, %v", n, err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > uint64(len(data))/4 {
		t.Errorf("allocated %d bytes decoding %d: want the output out of the heap", alloc, len(data))
	}
	zr.Close()
	zr = newXZReader(bufio.NewReader(bytes.NewReader(s)))
	if _, err := io.ReadFull(zr, make([]byte, 3<<20)); err != nil {
		t.Fatal(err)
	}
	zr.Close()
	for range 100 { // the blocks queued when Close came are decoded, then closed
		if fds() <= before {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := fds(); n > before {
		t.Errorf("%d files open after Close, %d before", n, before)
	}
}

// TestXZDamage refuses streams damaged in one of their blocks, or in their index, after
// returning at most the output of the blocks before the damage.
func TestXZDamage(t *testing.T) {
	needXZ(t)
	data := somewhatRandom(2 << 20)
	s := xzMulti(t, data, 256<<10)
	blocks, index := xzBlocks(t, s)
	crc := func(b []byte, from, to int) { binary.LittleEndian.PutUint32(b[to:], crc32.ChecksumIEEE(b[from:to])) }
	for _, tc := range []struct {
		name   string
		damage func(b []byte)
		want   any // the number of the block named, or the error of the index
	}{
		{"data of block 4", func(b []byte) { b[blocks[3]+100] ^= 0x55 }, 4},
		{"check of block 4", func(b []byte) { b[blocks[4]-1] ^= 1 }, 4},
		{"header of block 4", func(b []byte) { b[blocks[3]+2] ^= 1 }, 4},
		{"size in block 4's header", func(b []byte) {
			h := b[blocks[3] : blocks[3]+(int(b[blocks[3]])+1)*4]
			h[2] ^= 1 // the low bit of the compressed size, after the size byte and the flags
			crc(h, 0, len(h)-4)
		}, 4},
		{"index record", func(b []byte) {
			b[index+2] ^= 1 // the first record's unpadded size
			end := len(b) - xzHeaderLen - 4
			crc(b, index, end)
		}, errXZRecord},
		{"index CRC32", func(b []byte) { b[len(b)-xzHeaderLen-1] ^= 1 }, errXZFooter},
	} {
		eachXZDecoder(t, func(t *testing.T) {
			t.Run(tc.name, func(t *testing.T) {
				b := bytes.Clone(s)
				tc.damage(b)
				got, err := inflateAll(b)
				var be *xzBlockError
				switch want := tc.want.(type) {
				case int:
					if !errors.As(err, &be) || be.block != want || be.at != int64(blocks[want-1]) {
						t.Errorf("error %v, want one of block %d at byte %d", err, want, blocks[want-1])
					}
				case error:
					if !errors.Is(err, want) {
						t.Errorf("error %v, want %v", err, want)
					}
				}
				if !bytes.HasPrefix(data, got) {
					t.Errorf("returned %d bytes that are not the start of the data", len(got))
				}
			})
		})
	}
}

// TestXZDamageStreamed refuses a block decoded as it is read, one whose header gives no
// sizes, damaged in its data, naming the block, with the host's xz and with the Go decoder.
// Its output is checked only at its end, so bytes before the error may be wrong: the
// archive's sha256 is what refuses a damaged download, and a cache entry is whole or absent.
func TestXZDamageStreamed(t *testing.T) {
	data := somewhatRandom(1 << 20)
	s := xzStream(t, data, 1<<30, xz.CRC64)
	if comp, size, _ := parseBlockHeader(s[xzHeaderLen : xzHeaderLen+(int(s[xzHeaderLen])+1)*4]); comp >= 0 || size >= 0 {
		t.Fatalf("block header gives sizes %d, %d: want none", comp, size)
	}
	damaged := bytes.Clone(s)
	damaged[len(s)/2] ^= 0x55
	truncated := s[:len(s)-100]
	eachXZDecoder(t, func(t *testing.T) {
		if got, err := inflateAll(s); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("undamaged: %d bytes, %v", len(got), err)
		}
		for name, b := range map[string][]byte{"damaged": damaged, "truncated": truncated} {
			got, err := inflateAll(b)
			if be := (*xzBlockError)(nil); !errors.As(err, &be) || be.block != 1 || be.at != 12 {
				t.Errorf("%s: error %v, want one of block 1 at byte 12", name, err)
			}
			if len(got) >= len(data) {
				t.Errorf("%s: returned all %d bytes", name, len(got))
			}
		}
	})
}

// eachXZDecoder runs f with the host's xz decoding streamed blocks, if there is one, and
// with the Go decoder.
func eachXZDecoder(t *testing.T, f func(t *testing.T)) {
	host := hostXZ
	defer func() { hostXZ = host }()
	t.Run("host", func(t *testing.T) {
		if host() == "" {
			testfs.NeedTools(t, "xz")
		}
		f(t)
	})
	hostXZ = func() string { return "" }
	t.Run("go", f)
}

// TestXZDamageCache leaves the cache as it was after fetching a package whose xz stream
// is damaged in a middle block, as its publisher made it (the index's sha256 is of the
// damaged archive).
func TestXZDamageCache(t *testing.T) {
	needXZ(t)
	files := testFiles()
	s := xzMulti(t, makeTar(t, files), 512<<10)
	blocks, _ := xzBlocks(t, s)
	if len(blocks) < 3 {
		t.Fatalf("%d blocks, want 3 or more", len(blocks))
	}
	s[blocks[len(blocks)/2]+200] ^= 0x55
	p := entry("demo", s, files)
	p.Archive = "demo.tar.xz"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, p.Archive), s, 0o644); err != nil {
		t.Fatal(err)
	}
	c := openCache(t)
	err := fetchOne(c, quick(t, dir), p)
	if !errors.As(err, new(*xzBlockError)) {
		t.Errorf("fetch: %v, want the damaged block named", err)
	}
	checkEmpty(t, c)
}

// TestXZClose closes readers in the middle of a stream, with blocks decoded in parallel
// and a block decoded as it is read; a read after Close fails instead of waiting.
func TestXZClose(t *testing.T) {
	needXZ(t)
	data := somewhatRandom(2 << 20)
	streams := map[string][]byte{
		"parallel": xzMulti(t, data, 128<<10),
		"streamed": xzStream(t, data, 1<<20, xz.CRC64),
	}
	eachXZDecoder(t, func(t *testing.T) {
		for name, s := range streams {
			zr := newXZReader(bufio.NewReader(bytes.NewReader(s)))
			if _, err := io.ReadFull(zr, make([]byte, 300<<10)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			zr.Close()
			if _, err := zr.Read(make([]byte, 1<<20)); !errors.Is(err, errStopped) {
				t.Errorf("%s: read after close: %v, want errStopped", name, err)
			}
		}
	})
}

// BenchmarkXZ decodes 16 MiB to io.Discard from one block, and from 16 blocks of 1 MiB
// that give their sizes, as xz -T writes them, with the host's xz and with the Go decoder.
func BenchmarkXZ(b *testing.B) {
	needXZ(b)
	data := somewhatRandom(16 << 20)
	for _, bc := range []struct {
		name   string
		stream []byte
	}{
		{"1block", xzStream(b, data, 1<<30, xz.CRC64)},
		{"16blocks", xzMulti(b, data, 1<<20)},
	} {
		for _, dec := range []string{"host", "go"} {
			b.Run(bc.name+"/"+dec, func(b *testing.B) {
				if dec == "go" {
					host := hostXZ
					defer func() { hostXZ = host }()
					hostXZ = func() string { return "" }
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					zr := newXZReader(bufio.NewReaderSize(bytes.NewReader(bc.stream), streamBufSize))
					if _, err := io.Copy(io.Discard, zr); err != nil {
						b.Fatal(err)
					}
					zr.Close()
				}
			})
		}
	}
}
