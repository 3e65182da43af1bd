// Package procname names other processes by their command lines, for what pkg says while
// it waits for them.
package procname

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"pkg/internal/termtext"
)

// Names names pids by their command lines: "pid 12 (pkg install hello), pid 34 (pkg
// sync)". A pid whose command line cannot be read is named by its number alone; a command
// line is made printable and cut at 100 runes.
func Names(pids []int) string {
	var named []string
	for _, pid := range pids {
		name := "pid " + strconv.Itoa(pid)
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(b) > 0 {
			args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
			args[0] = filepath.Base(args[0])
			for i, a := range args { // another user's may hold a password (--repo NAME=https://u:p@h/)
				args[i] = termtext.WithoutCredentials(a)
			}
			line := termtext.Printable(strings.Join(args, " "))
			if r := []rune(line); len(r) > 100 {
				line = string(r[:100]) + "…"
			}
			name += " (" + line + ")"
		}
		named = append(named, name)
	}
	return strings.Join(named, ", ")
}
