package tarutil

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"

	"pkg/internal/termtext"
)

// ErrDamaged reports an aligned tar that no longer holds what its index describes.
var ErrDamaged = errors.New("tarutil: archive does not match its index")

// maxSpotHeaders bounds the header blocks SpotCheck reads: enough to notice a tar that is
// shifted, overwritten or replaced, few enough to cost well under a millisecond.
const maxSpotHeaders = 64

// SpotCheck checks cheaply that r, an aligned tar of size bytes written by Align, still holds
// members, as ReadIndex returned them: it ends with two zero blocks, the header block of
// up to 64 regular members, the first and the last among them, is the one Align wrote for
// it, and the data of members up to budget bytes in all has the member's digest. When all
// regular data fits the budget every member is checked, so a small archive is checked
// entirely; a larger one only in a sample. Damage is reported as ErrDamaged, in a
// *MemberError when a member is concerned.
func SpotCheck(r io.ReaderAt, size int64, members []Member, budget int64) error {
	var end [2 * blockSize]byte
	if size < int64(len(end)) {
		return damagedf("%d bytes", size)
	}
	if _, err := r.ReadAt(end[:], size-int64(len(end))); err != nil {
		return fmt.Errorf("read end of archive: %w", err)
	}
	if end != zeros {
		return damagedf("no end-of-archive blocks")
	}
	s := &spotChecker{r: r, budget: budget, enc: encoder{}}
	for i, n := range spotOrder(members) {
		if err := s.member(&members[i], n < maxSpotHeaders); err != nil {
			return err
		}
	}
	return nil
}

// spotOrder yields the indexes of the regular members with data, in the order SpotCheck
// visits them: the first, the last, then evenly spread over the rest; and how many it
// visited before.
func spotOrder(members []Member) func(yield func(int, int) bool) {
	return func(yield func(int, int) bool) {
		count := 0
		for i := range members {
			if members[i].Type == tar.TypeReg {
				count++
			}
		}
		if count == 0 {
			return
		}
		// Made once, 4 bytes a member: grown by append, 2^20 ints left 40 MB behind.
		regular := make([]int32, 0, count)
		for i := range members {
			if members[i].Type == tar.TypeReg {
				regular = append(regular, int32(i))
			}
		}
		n := 0
		visit := func(k int) bool { n++; return yield(int(regular[k]), n-1) }
		if !visit(0) || len(regular) > 1 && !visit(len(regular)-1) {
			return
		}
		stride := max(1, (len(regular)-2)/maxSpotHeaders)
		for k := 1; k < len(regular)-1; k += stride {
			if !visit(k) {
				return
			}
		}
		for k := 1; stride > 1 && k < len(regular)-1; k++ {
			if (k-1)%stride != 0 && !visit(k) {
				return
			}
		}
	}
}

// spotChecker checks members against the tar, within a budget of data bytes to hash.
type spotChecker struct {
	r      io.ReaderAt
	budget int64
	enc    encoder
	blk    [blockSize]byte
	h      hash.Hash // reused: a member's own would be 2^20 of them at the limits
	sum    [sha256.Size]byte
}

// member checks m's header block, when header is set, and its data, when it fits the
// budget left.
func (s *spotChecker) member(m *Member, header bool) error {
	if header {
		if m.Offset < blockSize {
			return &MemberError{Name: m.Name, Err: damagedf("data at offset %d", m.Offset)}
		}
		if _, err := s.r.ReadAt(s.blk[:], m.Offset-blockSize); err != nil {
			return fmt.Errorf("read header of member %s: %w", termtext.Quote(m.Name), err)
		}
		s.enc.memberBlock(m.Name, m)
		if !bytes.Equal(s.blk[:], s.enc.blk[:]) {
			return &MemberError{Name: m.Name, Err: damagedf("header block differs")}
		}
	}
	if m.Size > s.budget {
		return nil
	}
	s.budget -= m.Size
	if s.h == nil {
		s.h = sha256.New()
	}
	s.h.Reset()
	bp := copyPool.Get().(*[]byte)
	_, err := io.CopyBuffer(s.h, io.NewSectionReader(s.r, m.Offset, m.Size), *bp)
	copyPool.Put(bp)
	if err != nil {
		return fmt.Errorf("read member %s: %w", termtext.Quote(m.Name), err)
	}
	if [32]byte(s.h.Sum(s.sum[:0])) != m.SHA256 {
		return &MemberError{Name: m.Name, Err: damagedf("data differs from its digest")}
	}
	return nil
}
