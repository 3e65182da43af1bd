package fetch

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestPipe passes a stream through a pipe of small chunks, read in odd sizes.
func TestPipe(t *testing.T) {
	data := somewhatRandom(100000)
	p := newPipe(3, 1000)
	go p.fill(iotest.HalfReader(bytes.NewReader(data)))
	got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(p, 3)))
	if err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(p)
	if err != nil || !bytes.Equal(append(got, rest...), data) {
		t.Errorf("got %d bytes, %v; want the %d written", len(got)+len(rest), err, len(data))
	}
}

// TestPipeErrors passes the writer's error on, and stops the writer when the reader stops.
func TestPipeErrors(t *testing.T) {
	boom := errors.New("boom")
	p := newPipe(2, 10)
	go p.fill(io.MultiReader(bytes.NewReader(make([]byte, 25)), iotest.ErrReader(boom)))
	if n, err := io.Copy(io.Discard, p); n != 25 || err != boom {
		t.Errorf("read %d bytes, %v; want 25, boom", n, err)
	}
	p = newPipe(2, 10)
	done := make(chan error)
	go func() { done <- p.fill(bytes.NewReader(make([]byte, 1000))) }()
	p.Read(make([]byte, 5))
	p.closeRead()
	if err := <-done; err != errReaderGone {
		t.Errorf("fill after closeRead: %v, want errReaderGone", err)
	}
}
