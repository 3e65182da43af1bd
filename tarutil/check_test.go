package tarutil

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestSpotCheck damages an aligned tar in one place per case and checks that SpotCheck
// notices, naming the member, or, past its budget, that it does not pretend to.
func TestSpotCheck(t *testing.T) {
	entries := []entry{dir("d/"), file("d/small", 100), file("d/big", 3*Alignment+7), symlink("d/l", "small")}
	for i := range 200 {
		entries = append(entries, file(fmt.Sprintf("many/f%03d", i), 10+i))
	}
	var out bytes.Buffer
	st, err := Align(&out, bytes.NewReader(makeTar(t, tar.FormatPAX, entries...)), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	good := out.Bytes()
	at := func(name string) *Member {
		for i := range st.Members {
			if st.Members[i].Name == name {
				return &st.Members[i]
			}
		}
		t.Fatalf("no member %q", name)
		return nil
	}
	flip := func(off int64) func([]byte) []byte {
		return func(b []byte) []byte { b[off] ^= 0x20; return b }
	}
	tests := []struct {
		name   string
		damage func([]byte) []byte
		budget int64
		member string // "" for damage that is no member's
		err    error
	}{
		{"intact", func(b []byte) []byte { return b }, 1 << 20, "", nil},
		{"data-small", flip(at("d/small").Offset + 50), 1 << 20, "d/small", ErrDamaged},
		{"data-big", flip(at("d/big").Offset + 5000), 1 << 20, "d/big", ErrDamaged},
		{"data-last", flip(at("many/f199").Offset), 1 << 20, "many/f199", ErrDamaged},
		{"data-past-budget", flip(at("d/big").Offset + 5000), 1000, "", nil},
		{"header-name", flip(at("many/f098").Offset - blockSize + 3), 0, "many/f098", ErrDamaged},
		{"header-unsampled", flip(at("many/f100").Offset - blockSize + 3), 0, "", nil},
		{"header-size", flip(at("d/big").Offset - blockSize + offSize + 10), 0, "d/big", ErrDamaged},
		{"header-first", flip(at("d/small").Offset - blockSize + offMode + 4), 0, "d/small", ErrDamaged},
		{"end-blocks", flip(int64(len(good) - 3)), 0, "", ErrDamaged},
		{"shifted", func(b []byte) []byte { return append(make([]byte, blockSize), b[:len(b)-blockSize]...) }, 0, "", ErrDamaged},
		{"shifted-end-kept", func(b []byte) []byte {
			return append(append(make([]byte, blockSize), b[:len(b)-3*blockSize]...), zeros[:]...)
		}, 0, "d/small", ErrDamaged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.damage(bytes.Clone(good))
			err := SpotCheck(bytes.NewReader(b), int64(len(b)), st.Members, tt.budget)
			if tt.err == nil {
				if err != nil {
					t.Fatalf("SpotCheck: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("SpotCheck: %v, want %v", err, tt.err)
			}
			var me *MemberError
			if got := ""; errors.As(err, &me) {
				got = me.Name
				if got != tt.member {
					t.Errorf("SpotCheck: %v names %q, want %q", err, got, tt.member)
				}
			} else if tt.member != "" {
				t.Errorf("SpotCheck: %v names no member, want %q", err, tt.member)
			}
		})
	}
}
