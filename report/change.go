package report

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"pkg/install"
	"pkg/internal/shell"
	"pkg/internal/units"
	"pkg/txn"
)

// committedText says how many packages out changed, by what it did to them, as a plan's
// changes count them (an npm instance another version replaced is one upgrade), and how
// long the shared commit took (each resultText's time is its staging alone); removals
// count once out committed. It returns "" where out installed nothing: a change that only
// removes has no commit time apart from its lines, which say all it did.
func committedText(out *txn.Outcome) string {
	if len(out.Results) == 0 {
		return ""
	}
	counts := make(map[string]int, len(verbs))
	for _, res := range out.Results {
		counts[resultVerb(res, out.Again)]++
	}
	if out.Committed {
		counts["removed"] = len(out.Removed)
	}
	var n int
	var each []string
	for _, v := range verbs {
		if counts[v] > 0 {
			n += counts[v]
			each = append(each, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	s := "committed " + units.Count(n, "package")
	if len(each) > 1 || counts["installed"] == 0 {
		s += " (" + strings.Join(each, ", ") + ")"
	}
	return s + " in " + units.Duration(out.Results[0].Commit)
}

// Told is what to tell of a command's work: lines for its output, notes and warnings.
type Told struct{ Out, Notes, Warnings []string }

// AppliedText is what to tell of a change applied, out its outcome: what Apply kept of
// the trees it replaced (warnings), how it copied data rather than share blocks with the
// cache (a note, copyText), a line per package installed and, if the change committed,
// removed (removedText), one for the commit (committedText), and, if it committed, what
// else it did (changeText, with unneededTip), what the cache could not do
// (changeNotes) and how to put a bin/ not on PATH there (a note).
func AppliedText(out *txn.Outcome, unneededTip string) Told {
	var t Told
	for _, s := range out.Salvaged {
		t.Warnings = append(t.Warnings, SalvageText(s, out.Root)...)
	}
	if out.Copied != nil {
		how, why := copyText(out.Copied, out.Cache, out.Root)
		t.Notes = append(t.Notes, fmt.Sprintf("%s: copying %s instead of sharing blocks", why, how))
	}
	for _, res := range out.Results {
		t.Out = append(t.Out, resultText(res, out.Again, out.Locked, out.Origins[res.Name]))
	}
	if out.Committed {
		t.Out = append(t.Out, removedText(out)...)
	}
	if s := committedText(out); s != "" {
		t.Out = append(t.Out, s)
	}
	if out.Committed {
		t.Out = append(t.Out, changeText(out, unneededTip)...)
		t.Notes = append(t.Notes, changeNotes(out)...)
	}
	switch {
	case out.OffPath == "":
	case !shell.CanBeOnPath(out.OffPath):
		t.Notes = append(t.Notes, fmt.Sprintf("%s is not on PATH, and cannot be: it holds ':', which separates PATH's directories; "+
			"to run the commands pkg installs there, make a symlink to it at a path without ':' and put that on PATH", out.OffPath))
	default:
		t.Notes = append(t.Notes, fmt.Sprintf("%s is not on PATH; to run the commands pkg installs there, add it in your shell's profile: export PATH=%s",
			out.OffPath, shell.Quote(out.OffPath+":")+`"$PATH"`))
	}
	return t
}

// InstalledText names the packages out installed, "a 1.0, b 2.0", or returns "" for none.
func InstalledText(out *txn.Outcome) string {
	made := make([]string, len(out.Results))
	for i, res := range out.Results {
		made[i] = res.Name + " " + res.Version
	}
	return strings.Join(made, ", ")
}

// removedText says which packages a committed change removed, and why those it took along.
func removedText(out *txn.Outcome) []string {
	var lines []string
	for _, r := range out.Removed {
		line := "removed " + r.Name
		if r.Version != "" {
			line += " " + r.Version
		}
		if why, ok := out.Along[r.Key()]; ok {
			line += " (" + why + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

// changeText says what else a committed change did: the commands that changed, and the
// packages no longer needed and those only they need, the last followed by unneededTip.
func changeText(out *txn.Outcome, unneededTip string) []string {
	var lines []string
	for _, ch := range out.Commands {
		lines = append(lines, commandText(ch))
	}
	for _, p := range out.Unneeded {
		lines = append(lines, p.Name+" "+p.Version+" is no longer needed by another package")
	}
	for _, p := range out.Stranded {
		lines = append(lines, p.Name+" "+p.Version+" is needed only by packages no longer needed")
	}
	if len(out.Unneeded) > 0 {
		lines[len(lines)-1] += unneededTip
	}
	return lines
}

// changeNotes says what the cache could not do for a committed change: record the root
// (Unshared), or sync its entries (Unsettled).
func changeNotes(out *txn.Outcome) []string {
	var notes []string
	if out.Unshared != nil {
		notes = append(notes, out.Unshared.Error()+"; a cache prune from another root may remove what this one installed from")
	}
	if out.Unsettled != nil {
		notes = append(notes, out.Unsettled.Error()+"; cache entries left unsynced have all their data checked at their first use after a reboot")
	}
	return notes
}

// copyText says how res copied its data rather than share blocks with the cache at cache,
// and why, for a root at root; both are "" where it shared them.
func copyText(res *install.Result, cache, root string) (how, why string) {
	if res.Fallback == nil {
		return "", ""
	}
	how = "with copy_file_range"
	if res.Method == install.Copy {
		how = "through a buffer"
	}
	switch {
	case errors.Is(res.Fallback, syscall.EXDEV):
		why = fmt.Sprintf("the cache %s and the root %s are on different filesystems or mounts", cache, root)
	case errors.Is(res.Fallback, syscall.EOPNOTSUPP):
		why = fmt.Sprintf("the filesystem of %s cannot share blocks between files (XFS and btrfs can)", root)
	default:
		why = res.Fallback.Error()
	}
	return how, why
}
