package fetch

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"sync"
)

// hostXZ is the xz(1) that decodes the blocks, "" where there is none and the Go decoder
// does. xz decodes about 1.6x as fast as the Go decoder (docs/history.md), in a process of
// its own, so that decoding overlaps the conversion: one process streams a block without
// sizes in its header (single-threaded xz writes one for a whole stream), which cannot be
// split; one per block decodes each buffered block (xz.go). The splitter has refused the
// block's dictionary if it is over maxWindow before xz sees it.
var hostXZ = sync.OnceValue(func() string {
	path, err := exec.LookPath("xz")
	if err != nil {
		return ""
	}
	return path
})

// xzProc is the output of an xz process decoding one stream, the block as the splitter
// writes it.
type xzProc struct {
	cmd    *exec.Cmd
	out    io.ReadCloser
	in     *failReader
	stderr limitedBuffer
	waited bool
	err    error
}

// xzArgs make xz decode its input to its output, single-threaded, within the memory that
// a dictionary of maxWindow needs.
var xzArgs = []string{"--decompress", "--stdout", "--quiet", "--threads=1",
	"--memlimit-decompress=" + strconv.Itoa(maxWindow+maxWindow/4)}

func startXZ(path string, in io.Reader) (*xzProc, error) {
	p := &xzProc{in: &failReader{r: in}}
	p.cmd = exec.Command(path, xzArgs...)
	detach(p.cmd)
	p.cmd.Stdin = p.in
	p.cmd.Stderr = &p.stderr
	var err error
	if p.out, err = p.cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *xzProc) Read(b []byte) (int, error) {
	if p.waited {
		return 0, p.err
	}
	n, err := p.out.Read(b)
	if err == io.EOF {
		if err = p.wait(); err == nil {
			err = io.EOF
		}
	}
	return n, err
}

// wait reaps the process and returns why the stream is bad, if it is: first what the
// splitter found, then what xz said.
func (p *xzProc) wait() error {
	if p.waited {
		return p.err
	}
	p.waited = true
	err := p.cmd.Wait()
	switch {
	case p.in.err != nil:
		p.err = p.in.err
	case err != nil && p.stderr.Len() > 0:
		p.err = errors.New(string(bytes.TrimSpace(p.stderr.Bytes())))
	default:
		p.err = err
	}
	if p.err == nil {
		p.err = io.EOF
		return nil
	}
	return p.err
}

// stop kills the process if it still runs, and reaps it.
func (p *xzProc) stop() {
	if !p.waited {
		p.cmd.Process.Kill()
		p.wait()
	}
}

// failReader remembers the first error other than io.EOF its reader returned.
type failReader struct {
	r   io.Reader
	err error
}

func (f *failReader) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

// limitedBuffer keeps the first 1 KiB written to it.
type limitedBuffer struct{ bytes.Buffer }

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if room := 1024 - l.Len(); room > 0 {
		l.Buffer.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}
