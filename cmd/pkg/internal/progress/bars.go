package progress

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"pkg/internal/termtext"
)

// redraw is how often the bars are drawn again.
const redraw = 150 * time.Millisecond

// bars draws, on a terminal, one progress bar per download in flight below the lines
// printed so far: each progressbar renders into its bar, and bars draws them all.
type bars struct {
	w     io.Writer
	width int // of the terminal
	mu    sync.Mutex
	live  []*bar
	drawn int // bar lines drawn last, just above the cursor
	stop  chan struct{}
	done  chan struct{}
}

// bar keeps the last line its progressbar rendered.
type bar struct {
	pb   *progressbar.ProgressBar
	mu   sync.Mutex
	line string
}

func (b *bar) Write(p []byte) (int, error) {
	s := string(p)
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	if s = strings.TrimSpace(s); s != "" {
		b.mu.Lock()
		b.line = s
		b.mu.Unlock()
	}
	return len(p), nil
}

func (b *bar) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.line
}

// IsTerminal reports whether w, or what a termtext.Writer w writes to, is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := unwrap(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func unwrap(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}

// newBars returns bars drawing on w, or on what a termtext.Writer w writes to, or nil
// when that is not a terminal, or one that moves no cursor (TERM=dumb: Emacs's shell).
func newBars(w io.Writer) *bars {
	if w = unwrap(w); !IsTerminal(w) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	width, _, err := term.GetSize(int(w.(*os.File).Fd()))
	if err != nil || width < 20 {
		width = 80
	}
	bs := &bars{w: w, width: width, stop: make(chan struct{}), done: make(chan struct{})}
	go bs.loop()
	return bs
}

func (bs *bars) loop() {
	defer close(bs.done)
	t := time.NewTicker(redraw)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			bs.mu.Lock()
			bs.draw("")
			bs.mu.Unlock()
		case <-bs.stop:
			return
		}
	}
}

// add starts a bar of size bytes and returns the writer that counts them.
func (bs *bars) add(desc string, size int64) *bar {
	b := &bar{}
	b.pb = progressbar.NewOptions64(max(size, 1),
		progressbar.OptionSetWriter(b),
		progressbar.OptionSetDescription(termtext.Safe(desc)),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(min(30, bs.width/4)),
		progressbar.OptionThrottle(redraw/2),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetRenderBlankState(true),
	)
	bs.mu.Lock()
	bs.live = append(bs.live, b)
	bs.mu.Unlock()
	return b
}

// finish removes b and prints line above the bars.
func (bs *bars) finish(b *bar, line string) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if i := slices.Index(bs.live, b); i >= 0 {
		bs.live = slices.Delete(bs.live, i, i+1)
	}
	bs.draw(line)
}

// close erases the bars.
func (bs *bars) close() {
	close(bs.stop)
	<-bs.done
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.live = nil
	bs.draw("")
}

// draw goes back to the first bar line, prints line if any, then every bar, each line
// cleared and cut to the terminal's width so none wraps, and clears what is below.
func (bs *bars) draw(line string) {
	var sb strings.Builder
	if bs.drawn > 0 {
		fmt.Fprintf(&sb, "\r\033[%dA", bs.drawn)
	}
	if line != "" {
		sb.WriteString("\033[2K" + termtext.Safe(line) + "\n")
	}
	for _, b := range bs.live {
		sb.WriteString("\033[2K" + cut(b.String(), bs.width-1) + "\n")
	}
	sb.WriteString("\033[J")
	bs.drawn = len(bs.live)
	io.WriteString(bs.w, sb.String())
}

// cut shortens s to n runes.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
