package tarutil

import "hash/maphash"

// pathSet is the set of paths a checker has seen, each with its type, numbered in the order
// added: an open-addressing hash table of numbers into names, at most half full. Each path
// costs 16 bytes of names, 1 of types and 4 to 8 of slots besides its text; a
// map[string]uint32 took about 50 (at 2^20 paths, 52 MiB where this takes 25).
type pathSet struct {
	seed  maphash.Seed
	slots []uint32 // tagBits of the hash over a path's number plus one; 0 for none
	names []string
	types []byte
}

const (
	numBits = 21 // a path's number plus one: maxMembers fits
	tagMask = 1<<32 - 1<<numBits
	numMask = 1<<numBits - 1
)

const _ = uint(numMask - maxMembers) // every number fits below the tag

// reserve makes room for n paths, so that adding them neither rehashes nor copies.
func (s *pathSet) reserve(n int) {
	s.names = make([]string, 0, n)
	s.types = make([]byte, 0, n)
	s.rehash(n)
}

// len returns the number of paths added.
func (s *pathSet) len() int { return len(s.names) }

// find returns the number and type of name, ok false if it was not added.
func (s *pathSet) find(name string) (num int, typ byte, ok bool) {
	if len(s.slots) == 0 {
		return 0, 0, false
	}
	h := maphash.String(s.seed, name)
	tag := uint32(h>>32) & tagMask
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return 0, 0, false
		}
		if v&tagMask == tag {
			if n := int(v&numMask) - 1; s.names[n] == name {
				return n, s.types[n], true
			}
		}
	}
}

// add adds name, which it does not hold, with its type.
func (s *pathSet) add(name string, typ byte) {
	if 2*(len(s.names)+1) > len(s.slots) {
		s.rehash(2 * (len(s.names) + 1))
	}
	s.names = append(s.names, name)
	s.types = append(s.types, typ)
	s.put(name, uint32(len(s.names)))
}

// put puts the number plus one of name in the first free slot of its probe sequence.
func (s *pathSet) put(name string, num1 uint32) {
	h := maphash.String(s.seed, name)
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for s.slots[i] != 0 {
		i = (i + 1) & mask
	}
	s.slots[i] = uint32(h>>32)&tagMask | num1
}

// rehash makes the table at least twice n slots and puts every path in it again.
func (s *pathSet) rehash(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size <= len(s.slots) {
		return
	}
	if len(s.slots) == 0 {
		s.seed = maphash.MakeSeed()
	}
	s.slots = make([]uint32, size)
	for i, name := range s.names {
		s.put(name, uint32(i+1))
	}
}
