// Command namegen writes a plain tar of empty files whose names are as long as asked, for
// measuring what member names cost in memory (bench/names.sh): every file sits in one
// directory chain, so the archive holds one directory per level of that chain and the files.
//
//	namegen -members 120000 -namelen 4095 > long.tar     names of 4,095 bytes, 16 levels deep
//	namegen -members 1048575 -budget 67108864 > max.tar  as many members as the policy takes,
//	                                                     their names 64 MiB in all
package main

import (
	"archive/tar"
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	members := flag.Int("members", 120000, "members of the archive, its directories included")
	nameLen := flag.Int("namelen", 0, "bytes in each file's name, directories included (at most 4095)")
	budget := flag.Int64("budget", 0, "bytes of all members' names together; sets -namelen when it is 0")
	flag.Parse()
	if *nameLen == 0 && *budget > 0 {
		*nameLen = int(*budget / int64(*members))
	}
	if *members < 2 || *nameLen < 8 || *nameLen > 4095 {
		fmt.Fprintln(os.Stderr, "namegen: need -members of 2 or more and -namelen (or -budget) for names of 8 to 4095 bytes")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if err := write(w, *members, *nameLen); err != nil {
		fmt.Fprintf(os.Stderr, "namegen: %v\n", err)
		os.Exit(1)
	}
}

// write writes members members: the directories of a chain of components of at most 255
// bytes, then files in its last directory, their own components at most 254 bytes, each
// named nameLen bytes in all. The chain is only as deep as the files' names need, so the
// archive's name bytes are at most members*nameLen.
func write(out *bufio.Writer, members, nameLen int) error {
	tw := tar.NewWriter(out)
	dir := ""
	for d := nameLen - 1 - 254; d > 0; { // d: bytes of the chain and its last slash still to write
		c := min(255, d)
		if d == 256 { // 255 and a slash would leave an empty component
			c = 254
		}
		if dir != "" {
			dir += "/"
		}
		dir += strings.Repeat("d", c)
		if d -= c + 1; d < 0 {
			d = 0
		}
		if err := tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755, Format: tar.FormatPAX}); err != nil {
			return err
		}
		members--
	}
	prefix := dir
	if prefix != "" {
		prefix += "/"
	}
	for i := range members {
		id := fmt.Sprintf("%d-", i)
		name := prefix + id + strings.Repeat("f", nameLen-len(prefix)-len(id))
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Flush()
}
