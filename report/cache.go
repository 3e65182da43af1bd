package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"pkg/fetch"
	"pkg/internal/units"
)

// WriteCache prints a line per cache entry: the first 16 digits of its sha256, its package
// and version (or "unknown package"), its size and its last use. It returns why the
// packages it could not name are unknown (fetch.Entry.Err).
func WriteCache(w io.Writer, es []fetch.Entry) (unknown []error, err error) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, e := range es {
		what := e.Name + " " + e.Version
		if e.Err != nil {
			what = "unknown package"
			unknown = append(unknown, e.Err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.SHA256[:min(16, len(e.SHA256))], what, units.Size(e.Size),
			e.Used.Local().Format("2006-01-02 15:04"))
	}
	return unknown, tw.Flush()
}

// UnknownText says that WriteCache could not name the entries whose errors are unknown,
// giving the first, and reports whether that one shows its entry damaged (fetch.Damaged),
// which an install fetches again, for the advice a command adds; any other error, out of
// descriptors say, tells nothing of the entry.
func UnknownText(unknown []error) (text string, damaged bool) {
	return fmt.Sprintf("cannot read which package each of %s is (%v)", units.Count(len(unknown), "cached archive"), unknown[0]),
		fetch.Damaged(unknown[0])
}

// CacheText sums up a cache of n entries taking disk bytes.
func CacheText(n int, disk int64) string {
	return fmt.Sprintf("%s, %s of disk (a block several share counted once)", units.Count(n, "cached package"), units.Size(disk))
}

// TrimmedText says what a cache clean (pruned false) or a prune within l removed, and the
// unfinished bytes of killed downloads removed with it. A prune's figure is the disk it
// freed: it keeps every entry a root uses. A clean's is the disk its entries took, of which
// the blocks installed files were cloned from stay in use.
func TrimmedText(t fetch.Trimmed, pruned bool, l fetch.Limits, unfinished int64) string {
	why, size := "", units.Size(t.Freed)
	if pruned {
		why = " no installed package uses"
	} else {
		size += " of archives"
		if len(t.Removed) > 0 {
			size += " (blocks installed packages share with them stay in use)"
		}
	}
	if pruned && l.OlderThan > 0 {
		why += " and unused for " + units.Roughly(l.OlderThan)
	}
	if pruned && l.MaxSize > 0 {
		why += ", the least recently used first"
	}
	s := "removed " + units.Count(len(t.Removed), "cached package") + why + ", " + size
	if unfinished > 0 {
		s += ", and " + units.Size(unfinished) + " that killed downloads left"
	}
	return s
}

// OverLimitText says why a prune left the cache over l's MaxSize, or returns "".
func OverLimitText(t fetch.Trimmed, l fetch.Limits) string {
	if l.MaxSize == 0 || t.Size <= l.MaxSize {
		return ""
	}
	return fmt.Sprintf("the cache takes %s, over its limit of %s: the rest is what installed packages use", units.Size(t.Size), units.Size(l.MaxSize))
}
