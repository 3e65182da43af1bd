package report

import (
	"fmt"
	"strings"
	"time"

	"pkg/internal/procname"
	"pkg/internal/termtext"
	"pkg/internal/units"
	"pkg/notice"
)

// NoticeText words a notice a session sent its observer (txn.Observer.Notice), as a
// note or a warning says it after the program's name.
func NoticeText(n notice.Notice) string {
	switch n := n.(type) {
	case notice.RootRecovered:
		return "an earlier pkg command was cut short: " + recoveredText(n)
	case notice.RootLeftover:
		return fmt.Sprintf("could not delete what an earlier command left behind (the root is as recorded; delete it by hand): %s", n.Err)
	case notice.RootOfUser:
		return fmt.Sprintf("running as root in %s, which belongs to uid %d: what pkg installs there belongs to root, and that user cannot remove it; run pkg as that user", n.Dir, n.UID)
	case notice.RootBusy:
		if n.Holder == "" {
			return fmt.Sprintf("a pkg command did not finish changing %s (it was cut short, or failed); the next one that locks it undoes that change, and this is what was installed before it", n.Dir)
		}
		return fmt.Sprintf("%s is changing %s; this is what was installed before it started", n.Holder, n.Dir)
	case notice.RootNotYours:
		return n.Dir + " is not yours: verifying without its lock, so a command changing it meanwhile may show as problems"
	case notice.NothingInstalled:
		return "nothing is installed: " + n.Err.Error()
	case notice.Saved:
		return fmt.Sprintf("%s holds what upgrades and removes found added or changed in packages' directories (%d kept): look through it, and delete what you no longer need", n.Dir, n.Count)
	case notice.Kept:
		return fmt.Sprintf("keeping %s, not in %s", strings.Join(n.Names, ", "), n.Lock)
	case notice.Failover:
		return fmt.Sprintf("%v; using %s", n.Err, n.To)
	case notice.OfflineIndex:
		return fmt.Sprintf("offline: using the index of %s as last read %s (%s ago)", n.URL, n.Read.Local().Format("2006-01-02 15:04"), units.Roughly(time.Since(n.Read)))
	case notice.ExpiredIndex:
		return fmt.Sprintf("repository %s: offline, using the last verified index (version %d), which expired at %s", n.Location, n.Version, n.Expires.UTC().Format(time.RFC3339))
	case notice.NoIndex:
		why := n.Why
		if why == "" {
			why = "the repositories in effect do not offer them"
		}
		return fmt.Sprintf("no index or record to describe %s (%s): recorded without their commands, libraries and dependencies until installed again from an index or a lockfile that describes them", units.Some(n.Packages, noticeNames), why)
	case notice.NoCache:
		return "nothing is cached: no cache at " + n.Dir
	case notice.CacheWaiting:
		who := ""
		if len(n.Pids) > 0 {
			who = ": " + procname.Names(n.Pids)
		}
		return fmt.Sprintf("waiting for the other pkg commands using the cache %s to finish%s", n.Dir, who)
	case notice.ForgotRoot:
		return fmt.Sprintf("forgot root %s, which installed from this cache and is gone", n.Dir)
	case notice.NotPruned:
		return fmt.Sprintf("the cache was not pruned: %v", n.Err)
	case notice.AutoPruned:
		return fmt.Sprintf("pruned the cache to its configured limits: removed %s no installed package uses, %s; it takes %s",
			units.Count(n.Removed, "cached package"), units.Size(n.Freed), units.Size(n.Size))
	case notice.RunRootsPruned:
		return fmt.Sprintf("removed %s unused for %s", units.Count(n.Count, "run root"), units.Duration(n.OlderThan))
	}
	return fmt.Sprint(n)
}

// noticeNames is how many packages a notice names in each list where it has more (one
// more is named whole: units.Some), so that a commit of thousands of packages cut short
// is said in a line.
const noticeNames = 8

// recoveredText says what opening a root undid or deleted, a clause each, joined by "; ":
// "undid an interrupted install of a, b and 3 more; deleted the unfinished install of c".
func recoveredText(n notice.RootRecovered) string {
	var said []string
	for _, u := range n.Undone {
		said = append(said, "undid an interrupted "+u.Op+" of "+units.Some(u.Names, noticeNames))
	}
	for _, k := range n.Kept {
		said = append(said, fmt.Sprintf("kept the old tree of %s, with files of yours in it, in %s", k.Name, k.Dir))
	}
	for _, k := range n.Unsure {
		said = append(said, fmt.Sprintf("kept the tree of %s that an interrupted install left, as pkg could not tell it from the one in pkgs/, in %s", k.Name, k.Dir))
	}
	for _, k := range n.Aside {
		said = append(said, fmt.Sprintf("moved %s to %s: an interrupted first install may have begun it, and anything of yours in it is there", termtext.Quote(k.Name), termtext.Quote(k.Dir)))
	}
	for _, p := range n.Stuck {
		said = append(said, "could not keep yet the tree at "+p+", which may hold files of the user's: it stays for the next start")
	}
	if len(n.Unfinished) > 0 {
		said = append(said, "deleted the unfinished install of "+units.Some(n.Unfinished, noticeNames))
	}
	if len(n.Replaced) > 0 {
		said = append(said, "deleted the replaced or removed tree of "+units.Some(n.Replaced, noticeNames))
	}
	return strings.Join(said, "; ")
}
