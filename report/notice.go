package report

import (
	"fmt"
	"strings"
	"time"

	"pkg/internal/procname"
	"pkg/internal/units"
	"pkg/notice"
)

// NoticeText words a notice a session sent its observer (txn.Observer.Notice), as a
// note or a warning says it after the program's name.
func NoticeText(n notice.Notice) string {
	switch n := n.(type) {
	case notice.RootOpened:
		return n.Text
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
		return fmt.Sprintf("no index to describe the packages (%s): they are recorded without their commands, libraries and dependencies until reinstalled", n.Why)
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
		if n.RunRoots {
			return fmt.Sprintf("the run roots were not pruned: %v", n.Err)
		}
		return fmt.Sprintf("the cache was not pruned: %v", n.Err)
	case notice.AutoPruned:
		return fmt.Sprintf("pruned the cache to its configured limits: removed %s no installed package uses, %s; it takes %s",
			units.Count(n.Removed, "cached package"), units.Size(n.Freed), units.Size(n.Size))
	case notice.RunRootsPruned:
		return fmt.Sprintf("removed %s unused for %s", units.Count(n.Count, "run root"), units.Duration(n.OlderThan))
	}
	return fmt.Sprint(n)
}
