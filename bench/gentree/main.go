// Command gentree writes a deterministic synthetic package as a plain tar to stdout, shaped
// like a kernel source tree, a firmware collection, a few big files or one file, for
// benchmarks.
//
//	go run ./bench/gentree -shape kernel > kernel.tar
package main

import (
	"archive/tar"
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
)

// shape describes a tree: how many files, how big, how many per directory.
type shape struct {
	files  int
	perDir int
	size   func(r *rand.Rand) int64
}

var shapes = map[string]shape{
	// Lognormal sizes with a 4 KiB median and sigma 1.62 give a mean near 15 KiB: 80,000
	// files make about 1.2 GiB, like a kernel source tree.
	"kernel": {80000, 18, func(r *rand.Rand) int64 {
		return max(1, min(8<<20, int64(4096*math.Exp(1.62*r.NormFloat64()))))
	}},
	// Log-uniform between 30 KiB and 1 MiB.
	"firmware": {2500, 50, func(r *rand.Rand) int64 {
		return int64(30 << 10 * math.Exp(r.Float64()*math.Log(1024.0/30)))
	}},
	"big": {40, 40, func(*rand.Rand) int64 { return 32 << 20 }},
	// The many-small-files case of tarutil's benchmark, for counting write(2) calls.
	"small": {30000, 100, func(*rand.Rand) int64 { return 1 << 10 }},
	// One file of 1 MiB and 100 bytes (the size of bench/sync.sh's): what a command costs
	// whatever its tree, to set beside the same copy by cp.
	"one": {1, 1, func(*rand.Rand) int64 { return 1<<20 + 100 }},
}

func main() {
	name := flag.String("shape", "kernel", "kernel, firmware, big, small or one")
	scale := flag.Float64("scale", 1, "multiply the number of files by this")
	flag.Parse()
	sh, ok := shapes[*name]
	if !ok {
		fmt.Fprintf(os.Stderr, "gentree: unknown shape %q\n", *name)
		os.Exit(2)
	}
	sh.files = max(1, int(float64(sh.files)**scale))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if err := write(w, sh); err != nil {
		fmt.Fprintf(os.Stderr, "gentree: %v\n", err)
		os.Exit(1)
	}
}

func write(out *bufio.Writer, sh shape) error {
	r := rand.New(rand.NewPCG(1, 2))
	data := rand.NewChaCha8([32]byte{7})
	tw := tar.NewWriter(out)
	for i := 0; i < sh.files; i++ {
		if i%sh.perDir == 0 {
			if err := tw.WriteHeader(&tar.Header{Name: dirName(i/sh.perDir) + "/", Typeflag: tar.TypeDir, Mode: 0o755, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		size := sh.size(r)
		mode := int64(0o644)
		if i%50 == 0 {
			mode = 0o755
		}
		h := &tar.Header{Name: fmt.Sprintf("%s/f%05d.c", dirName(i/sh.perDir), i), Typeflag: tar.TypeReg, Mode: mode, Size: size, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, data, size); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Flush()
}

// dirName spreads directories over three levels, like a source tree.
func dirName(d int) string {
	return fmt.Sprintf("d%02d/s%02d/m%04d", d%16, (d/16)%32, d)
}
