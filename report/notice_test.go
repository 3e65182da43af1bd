package report

import (
	"errors"
	"testing"
	"time"

	"pkg/notice"
)

// TestNoticeText words each kind of notice as the session worded it before notices
// were values, and says which are warnings.
func TestNoticeText(t *testing.T) {
	bad := errors.New("bad")
	expires := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		n    notice.Notice
		want string
		warn bool
	}{
		{notice.RootRecovered{Unfinished: []string{"big"}, Replaced: []string{"old"}}, "an earlier pkg command was cut short: deleted the unfinished install of big; deleted the replaced or removed tree of old", false},
		{notice.RootRecovered{
			Undone: []notice.Undone{{Op: "install", Names: []string{"a", "c"}}, {Op: "remove", Names: []string{"b"}}},
			Kept:   []notice.KeptTree{{Name: "tool", Dir: "/r/.pkg/saved/tool-1.2"}},
			Unsure: []notice.KeptTree{{Name: "app", Dir: "/r/.pkg/saved/app-unsure.3"}},
			Stuck:  []string{"/r/.pkg/trash/lib.4"},
		}, "an earlier pkg command was cut short: undid an interrupted install of a and c; undid an interrupted remove of b; " +
			"kept the old tree of tool, with files of yours in it, in /r/.pkg/saved/tool-1.2; " +
			"kept the tree of app that an interrupted install left, as pkg could not tell it from the one in pkgs/, in /r/.pkg/saved/app-unsure.3; " +
			"could not keep yet the tree at /r/.pkg/trash/lib.4, which may hold files of the user's: it stays for the next start", false},
		{notice.RootRecovered{Aside: []notice.KeptTree{{Name: "bin/x\npkg: error: forged", Dir: "/r/.pkg/saved/first-bin-x\npkg: error: forged.7"}}},
			`an earlier pkg command was cut short: moved "bin/x\npkg: error: forged" to "/r/.pkg/saved/first-bin-x\npkg: error: forged.7": ` +
				"an interrupted first install may have begun it, and anything of yours in it is there", false},
		{notice.RootRecovered{Undone: []notice.Undone{{Op: "install", Names: []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}}}},
			"an earlier pkg command was cut short: undid an interrupted install of p0, p1, p2, p3, p4, p5, p6, p7 and 2 more", false},
		{notice.RootRecovered{Unfinished: []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"}, Replaced: []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"}},
			"an earlier pkg command was cut short: deleted the unfinished install of u0, u1, u2, u3, u4, u5, u6, u7 and u8; " +
				"deleted the replaced or removed tree of r0, r1, r2, r3, r4, r5, r6, r7 and 3 more", false},
		{notice.RootLeftover{Err: bad}, "could not delete what an earlier command left behind (the root is as recorded; delete it by hand): bad", true},
		{notice.RootOfUser{Dir: "/r", UID: 1000}, "running as root in /r, which belongs to uid 1000: what pkg installs there belongs to root, and that user cannot remove it; run pkg as that user", false},
		{notice.RootBusy{Dir: "/r", Holder: "pid 1 (pkg)"}, "pid 1 (pkg) is changing /r; this is what was installed before it started", false},
		{notice.RootBusy{Dir: "/r"}, "a pkg command did not finish changing /r (it was cut short, or failed); the next one that locks it undoes that change, and this is what was installed before it", false},
		{notice.RootNotYours{Dir: "/r"}, "/r is not yours: verifying without its lock, so a command changing it meanwhile may show as problems", false},
		{notice.NothingInstalled{Err: bad}, "nothing is installed: bad", false},
		{notice.Saved{Dir: "/r/.pkg/saved", Count: 2}, "/r/.pkg/saved holds what upgrades and removes found added or changed in packages' directories (2 kept): look through it, and delete what you no longer need", false},
		{notice.Kept{Names: []string{"a", "b"}, Lock: "pkg.lock"}, "keeping a, b, not in pkg.lock", false},
		{notice.Failover{To: "http://m", Err: bad}, "bad; using http://m", false},
		{notice.ExpiredIndex{Location: "http://r", Version: 3, Expires: expires}, "repository http://r: offline, using the last verified index (version 3), which expired at 2026-01-02T03:04:05Z", true},
		{notice.NoIndex{Why: "no repository is given", Packages: []string{"a 1", "b 2"}}, "no index or record to describe a 1 and b 2 (no repository is given): recorded without their commands, libraries and dependencies until installed again from an index or a lockfile that describes them", true},
		{notice.NoIndex{Packages: []string{"a 1"}}, "no index or record to describe a 1 (the repositories in effect do not offer them): recorded without their commands, libraries and dependencies until installed again from an index or a lockfile that describes them", true},
		{notice.NoCache{Dir: "/c"}, "nothing is cached: no cache at /c", false},
		{notice.CacheWaiting{Dir: "/c"}, "waiting for the other pkg commands using the cache /c to finish", false},
		{notice.ForgotRoot{Dir: "/r"}, "forgot root /r, which installed from this cache and is gone", false},
		{notice.NotPruned{Err: bad}, "the cache was not pruned: bad", false},
		{notice.RunRootsPruned{Count: 2, OlderThan: 2 * time.Hour}, "removed 2 run roots unused for 2h0m0s", false},
	}
	for _, tt := range tests {
		if got := NoticeText(tt.n); got != tt.want || tt.n.Warning() != tt.warn {
			t.Errorf("NoticeText(%#v) = %q, warning %v; want %q, warning %v", tt.n, got, tt.n.Warning(), tt.want, tt.warn)
		}
	}
}
