package tarutil

import (
	"archive/tar"
	"bytes"
	"testing"
	"testing/iotest"
)

// FuzzAlign checks that Align never panics and that whatever it accepts
// round-trips: archive/tar reads the input's members from the output, and
// Scan accepts the output and finds their data at its offsets.
func FuzzAlign(f *testing.F) {
	f.Add(makeTar(f, tar.FormatUSTAR, file("a", 10), dir("d/"), file("d/b", 4096), symlink("d/l", "b")))
	f.Add(makeTar(f, tar.FormatGNU, file(longName, 4097), hardlink("h", longName), symlink(long2, longName)))
	f.Add(makeTar(f, tar.FormatPAX, globalHeader(), file("./x/y", 5000), dir("x/"), file("x/ü", 1)))
	f.Add(makeTar(f, tar.FormatPAX, withTime(file("t", 0), testTime.Add(1e8)), file("a/../b", 511)))
	for _, tt := range toolArchives {
		if toolPresent(tt.tool) {
			f.Add(pack(f, sourceTree(f, tt.long), tt.tool, tt.args...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// Read directly (bytes.Reader has ReadByte) and through Align's buffer, in short
		// pieces: both must agree.
		var direct, buffered bytes.Buffer
		_, err := Align(&direct, bytes.NewReader(in), Limits{})
		_, err2 := Align(&buffered, iotest.HalfReader(bytes.NewReader(in)), Limits{})
		if (err == nil) != (err2 == nil) || err == nil && !bytes.Equal(direct.Bytes(), buffered.Bytes()) {
			t.Fatalf("read directly: %v; read in pieces through a buffer: %v, or different output", err, err2)
		}
		if err != nil {
			return
		}
		roundTrip(t, in)
	})
}

// FuzzScan checks that Scan never panics on any input, and that what it accepts has every
// member's data inside the archive, aligned where it must be.
func FuzzScan(f *testing.F) {
	for _, tt := range toolArchives {
		if toolPresent(tt.tool) {
			var out bytes.Buffer
			if _, err := Align(&out, bytes.NewReader(pack(f, sourceTree(f, tt.long), tt.tool, tt.args...)), Limits{}); err != nil {
				f.Fatal(err)
			}
			f.Add(out.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		members, err := Scan(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, m := range members {
			if m.Offset+m.Size > int64(len(in)) || m.Size >= Alignment && m.Offset%Alignment != 0 {
				t.Errorf("member %q: data at %d+%d in %d bytes", m.Name, m.Offset, m.Size, len(in))
			}
		}
	})
}
