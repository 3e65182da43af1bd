package report

import (
	"strings"
	"testing"
)

func TestFilesText(t *testing.T) {
	var b strings.Builder
	f := Files{Files: []File{{Path: "package", InRoot: "lib/node_modules/.pnpm/ms@2.1.3/node_modules/ms"}, {Path: "package/index.js", InRoot: "lib/node_modules/.pnpm/ms@2.1.3/node_modules/ms/index.js"}}}
	if err := f.WriteText(&b); err != nil || b.String() != "lib/node_modules/.pnpm/ms@2.1.3/node_modules/ms\nlib/node_modules/.pnpm/ms@2.1.3/node_modules/ms/index.js\n" {
		t.Errorf("Files.WriteText = %q, %v", b.String(), err)
	}
}
