package install

import (
	"archive/tar"
	"runtime"
	"strconv"
	"testing"

	"pkg/pkgtest/testrepo"
	"pkg/tarutil"
)

// TestCheckBin checks that bin entries are found among members by their files' types, and
// that finding them allocates for the entries only: a package may have 2^20 members, and a
// map of them all was 50 MiB of an install's peak (bench/names.sh).
func TestCheckBin(t *testing.T) {
	members := []tarutil.Member{{Name: "bin", Type: tar.TypeDir}}
	for i := range 50000 {
		members = append(members, tarutil.Member{Name: "bin/f" + strconv.Itoa(i), Type: tar.TypeReg})
	}
	members = append(members, tarutil.Member{Name: "bin/link", Type: tar.TypeSymlink, Linkname: "f1"},
		tarutil.Member{Name: "bin/hard", Type: tar.TypeLink, Linkname: "bin/f2"})
	for _, tc := range []struct {
		bin []string
		ok  bool
	}{
		{nil, true},
		{[]string{"bin/f7", "tool=bin/link", "./bin/hard"}, true},
		{[]string{"bin/f7", "bin"}, false},
		{[]string{"bin/missing"}, false},
	} {
		bin := testrepo.Commands(tc.bin...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := checkBin(bin, members)
		runtime.ReadMemStats(&after)
		if (err == nil) != tc.ok {
			t.Errorf("checkBin(%q) = %v, want ok %v", tc.bin, err, tc.ok)
		}
		// The count is the whole process's, other tests' goroutines included: the bound is
		// far under what a map of the members took (several MiB), far over that noise.
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("checkBin(%q) of %d members allocated %d bytes", tc.bin, len(members), got)
		}
	}
}
