package fetch

import (
	"sync"
	"unsafe"
)

// A conversion takes the buffers of its pipes and of its file writer as it needs them,
// not all at its start, and gives them back at its end for the next conversions of the
// process: a small archive costs the few buffers it fills, where taking all (16 MiB) made
// and zeroed that much memory for each package of a cold install.
var (
	pipeBufs   = &bufPool{}
	directBufs = &bufPool{aligned: true}
)

// bufPool keeps free buffers by size. An aligned pool's buffers start at an address
// aligned for O_DIRECT.
type bufPool struct {
	aligned bool
	by      sync.Map // size → *sync.Pool of *[]byte
}

// get returns a buffer of length 0 and capacity n, of the pool or new.
func (p *bufPool) get(n int) []byte {
	if b, ok := p.pool(n).Get().(*[]byte); ok {
		return (*b)[:0]
	}
	if p.aligned {
		return alignedBuf(n)
	}
	return make([]byte, 0, n)
}

// put gives b, which get returned, back to the pool; nothing must use it after.
func (p *bufPool) put(b []byte) {
	p.pool(cap(b)).Put(&b)
}

func (p *bufPool) pool(n int) *sync.Pool {
	if sp, ok := p.by.Load(n); ok {
		return sp.(*sync.Pool)
	}
	sp, _ := p.by.LoadOrStore(n, &sync.Pool{})
	return sp.(*sync.Pool)
}

// alignedBuf returns an empty buffer of capacity n whose first byte is aligned for O_DIRECT.
func alignedBuf(n int) []byte {
	b := make([]byte, n+directAlign)
	off := -int(uintptr(unsafe.Pointer(&b[0]))) & (directAlign - 1)
	return b[off : off : off+n]
}
