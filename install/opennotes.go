package install

import (
	"os"

	"golang.org/x/sys/unix"

	"pkg/notice"
)

// Notes returns what there is to say of r once opened, besides Links: what Open undid or
// deleted of what earlier commands cut short left (notice.RootRecovered), what it could
// not delete of that (notice.RootLeftover), and a root of another user's that this
// process, running as root, is about to write to (notice.RootOfUser).
func (r *Root) Notes() []notice.Notice {
	ns := r.recovered()
	var st unix.Stat_t
	if os.Geteuid() == 0 && unix.Fstat(r.fd[top], &st) == nil && st.Uid != 0 {
		ns = append(ns, notice.RootOfUser{Dir: r.dir, UID: st.Uid})
	}
	return ns
}

// recovered returns what the last reconcile undid or deleted of what earlier commands cut
// short left (notice.RootRecovered), and what it could not delete of that
// (notice.RootLeftover).
func (r *Root) recovered() []notice.Notice {
	var ns []notice.Notice
	if f := r.found; len(f.Undone)+len(f.Kept)+len(f.Unsure)+len(f.Aside)+len(f.Stuck)+len(f.Unfinished)+len(f.Replaced) > 0 {
		ns = append(ns, f)
	}
	if r.left != nil {
		ns = append(ns, notice.RootLeftover{Err: r.left})
	}
	return ns
}
