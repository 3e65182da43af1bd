package procname

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNames names this process by its command line, and a pid that is gone by its number
// alone.
func TestNames(t *testing.T) {
	got := Names([]int{os.Getpid(), 1 << 30})
	if !strings.HasPrefix(got, "pid ") || !strings.Contains(got, "procname.test") || !strings.HasSuffix(got, ", pid 1073741824") {
		t.Errorf("Names = %q", got)
	}
}

// TestNamesWithoutCredentials: another process's command line is named without the
// passwords of the URLs in it, in any of the forms pkg takes a repository.
func TestNamesWithoutCredentials(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30; :", "pkg", "--repo", "team=http://ci:S3cret@h/r/",
		"--repo=ops=oci://ci:S3cret@r/ops/tools", "--repo", "https://S3cret@h/")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) { // until sh has run
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); strings.Contains(string(b), "S3cret") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("command line of pid %d: %q", cmd.Process.Pid, b)
		}
	}
	got := Names([]int{cmd.Process.Pid})
	if strings.Contains(got, "S3cret") || !strings.Contains(got, "team=http://h/r/") {
		t.Errorf("Names = %q", got)
	}
}
