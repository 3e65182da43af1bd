// Command bootgen writes one deterministic package of bench/bootstrap.sh's repository as a
// plain tar to stdout: a command bin/NAME, and files adding up to SIZE bytes, nine in ten
// small (log-uniform 256 B to 32 KiB) and one in ten large (32 KiB to 4 MiB), half of them
// text and half binary-like, so that zstd shrinks them about as much as a real package.
//
//	bootgen NAME SEED SIZE > NAME.tar
package main

import (
	"archive/tar"
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: bootgen NAME SEED SIZE > NAME.tar")
		os.Exit(2)
	}
	seed, err1 := strconv.ParseUint(os.Args[2], 10, 64)
	size, err2 := strconv.ParseInt(os.Args[3], 10, 64)
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "bootgen: SEED and SIZE must be numbers")
		os.Exit(2)
	}
	if err := gen(os.Args[1], seed, size); err != nil {
		fmt.Fprintf(os.Stderr, "bootgen: %v\n", err)
		os.Exit(1)
	}
}

func gen(name string, seed uint64, total int64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	tw := tar.NewWriter(out)
	script := []byte("#!/bin/sh\necho " + name + "\n")
	if err := add(tw, "bin/"+name, 0o755, script); err != nil {
		return err
	}
	buf := make([]byte, 0, 4<<20)
	for i, n := 0, int64(len(script)); n < total; i++ {
		lo, hi := 256.0, 32<<10*1.0
		if rng.IntN(10) == 0 {
			lo, hi = 32<<10, 4<<20
		}
		size := min(int64(lo*math.Exp(rng.Float64()*math.Log(hi/lo))), total-n)
		buf = fill(rng, buf[:0], size, i%2 == 0)
		if err := add(tw, fmt.Sprintf("share/%s/d%02d/f%05d", name, i%20, i), 0o644, buf); err != nil {
			return err
		}
		n += size
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Flush()
}

func add(tw *tar.Writer, name string, mode int64, data []byte) error {
	h := &tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// fill appends size bytes: words from a small alphabet, or 1 KiB random runs each
// written twice.
func fill(rng *rand.Rand, b []byte, size int64, text bool) []byte {
	run := make([]byte, 1024)
	for int64(len(b)) < size {
		if text {
			for range 8 + rng.IntN(64) {
				b = append(b, "etaoinshrdlucmfw"[rng.IntN(16)])
			}
			b = append(b, " \n"[rng.IntN(2)])
			continue
		}
		for j := range run {
			run[j] = byte(rng.Uint32())
		}
		b = append(append(b, run...), run...)
	}
	return b[:size]
}
