// Command fetchtool serves bench/fetch.sh: it writes a deterministic package tree as a tar
// whose data compresses about as well as a real package's (text, and binary-like data with
// repeats), and it serves a directory over HTTP on the loopback interface.
//
//	fetchtool gen SIZE > tree.tar    a tar of SIZE bytes of file data
//	fetchtool serve DIR PORTFILE     serve DIR on 127.0.0.1, writing the URL to PORTFILE
package main

import (
	"archive/tar"
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[1] == "gen":
		err = gen(os.Args[2])
	case len(os.Args) == 4 && os.Args[1] == "serve":
		err = serve(os.Args[2], os.Args[3])
	default:
		fmt.Fprintln(os.Stderr, "usage: fetchtool gen SIZE | fetchtool serve DIR PORTFILE")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fetchtool: %v\n", err)
		os.Exit(1)
	}
}

// gen writes files of log-uniform sizes from 512 B to 8 MiB until their data add up to
// size bytes: two in three are text from a 4,096-word vocabulary, one in three is
// binary-like (random 4 KiB blocks, each a mutation of the previous one).
func gen(arg string) error {
	total, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := vocabulary(rng)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	tw := tar.NewWriter(out)
	buf := make([]byte, 0, 9<<20)
	for i, n := 0, int64(0); n < total; i++ {
		size := min(int64(512<<rng.IntN(14))+rng.Int64N(4096), total-n)
		if i%3 == 2 {
			buf = binary(rng, buf[:0], size)
		} else {
			buf = text(rng, words, buf[:0], size)
		}
		h := &tar.Header{Name: fmt.Sprintf("d%02d/f%05d", i%50, i), Typeflag: tar.TypeReg, Mode: 0o644,
			Size: size, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(buf); err != nil {
			return err
		}
		n += size
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Flush()
}

func vocabulary(rng *rand.Rand) [][]byte {
	words := make([][]byte, 4096)
	for i := range words {
		w := make([]byte, 2+rng.IntN(10))
		for j := range w {
			w[j] = 'a' + byte(rng.IntN(26))
		}
		words[i] = w
	}
	return words
}

func text(rng *rand.Rand, words [][]byte, b []byte, size int64) []byte {
	for int64(len(b)) < size {
		b = append(b, words[int(rng.ExpFloat64()*300)%len(words)]...)
		if rng.IntN(12) == 0 {
			b = append(b, '\n')
		} else {
			b = append(b, ' ')
		}
	}
	return b[:size]
}

func binary(rng *rand.Rand, b []byte, size int64) []byte {
	block := make([]byte, 4096)
	for int64(len(b)) < size {
		for range 1024 {
			block[rng.IntN(len(block))] = byte(rng.Uint32())
		}
		b = append(b, block...)
	}
	return b[:size]
}

// serve serves dir until killed. It listens before writing the URL, so a script that
// waits for portFile can connect at once.
func serve(dir, portFile string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	url := "http://" + l.Addr().String() + "/"
	if err := os.WriteFile(portFile+".tmp", []byte(url+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(portFile+".tmp", portFile); err != nil {
		return err
	}
	return http.Serve(l, http.FileServer(http.Dir(dir)))
}
