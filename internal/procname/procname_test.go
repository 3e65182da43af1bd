package procname

import (
	"os"
	"strings"
	"testing"
)

// TestNames names this process by its command line, and a pid that is gone by its number
// alone.
func TestNames(t *testing.T) {
	got := Names([]int{os.Getpid(), 1 << 30})
	if !strings.HasPrefix(got, "pid ") || !strings.Contains(got, "procname.test") || !strings.HasSuffix(got, ", pid 1073741824") {
		t.Errorf("Names = %q", got)
	}
}
