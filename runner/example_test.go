package runner_test

import (
	"fmt"

	"pkg/repo"
	"pkg/runner"
)

// The command a run picks: the package's only one, or the one named like the package.
func ExamplePick() {
	jq := repo.Package{Name: "jq", Version: "1.7", Bin: []repo.Command{{Name: "jq", Path: "bin/jq"}}}
	tools := repo.Package{Name: "tools", Version: "2", Bin: []repo.Command{{Name: "fmt", Path: "bin/fmt"}, {Name: "lint", Path: "bin/lint"}}}
	for _, c := range []struct {
		p     repo.Package
		asked string
	}{{jq, ""}, {tools, "lint"}, {tools, ""}} {
		cmd, err := runner.Pick(c.p, nil, c.asked)
		fmt.Printf("%q %v\n", cmd, err)
	}
	// Output:
	// "jq" <nil>
	// "lint" <nil>
	// "" run tools 2: the package has several commands, none named tools: fmt, lint
}
