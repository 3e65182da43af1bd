package report

import (
	"strings"
	"testing"
)

func TestFilesText(t *testing.T) {
	var b strings.Builder
	f := Files{Files: []File{{Path: "bin"}, {Path: "bin/hello"}}}
	if err := f.WriteText(&b); err != nil || b.String() != "bin\nbin/hello\n" {
		t.Errorf("Files.WriteText = %q, %v", b.String(), err)
	}
}
