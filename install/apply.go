package install

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/db"
	"pkg/internal/units"
	"pkg/repo"
)

// Apply commits staged trees and removes the named packages together, so that the root
// holds either the whole change or none of it: the database records an intent for each
// (db.DB.SetIntents: names of files, unsynced, where the filesystem logs metadata in
// order), every tree is swapped in and every removed tree renamed to the trash, one sync
// makes the intents, the trees and the renames durable, and one transaction records every
// package, deletes the removed ones and voids the intents. On XFS and ext4 that sync is the
// transaction's own first one (db.DB.CommitRequested), so the change costs one transaction,
// two fdatasyncs (one in a new root: db.DB.seal), in all, however many packages change;
// elsewhere two transactions and a sync (durable.Commit: a btrfs commit or a syncfs)
// between them, and a second sync for the prefix's links (rollForward). On an error it puts
// every old tree back; after a crash the next start does (see reconcile). A *LinksError
// means the change was committed, but not every command link follows it. Install, Remove,
// and pkg's install, upgrade, sync and remove all commit through it. Once ctx is done, it
// stops before the records are written, putting back every tree moved so far, and returns
// ctx's error: a change of thousands of packages renames as many trees.
func (r *Root) Apply(ctx context.Context, staged []*Staged, remove []string) ([]*Result, error) {
	start := time.Now()
	r.salvaged = nil
	defer r.Discard(staged...)
	requests, at, drop := r.requests, r.requestsAt, r.unrequests
	if len(drop) > 0 {
		r.askedFor() // while it knows what is asked for and no longer
	}
	r.requests, r.requestsAt, r.unrequests = nil, nil, nil
	sayings := r.sayings
	r.sayings = nil
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(staged) == 0 && len(remove) == 0 {
		if len(requests) == 0 && len(at) == 0 && len(drop) == 0 {
			return nil, nil
		}
		recs, err := r.db.List() // asked for, installed already
		if err != nil {
			return nil, err
		}
		asked := keyed(requests, at, drop, recs, nil, nil)
		if unasked := unaskedOf(drop, asked); !r.asksNPM(asked, unasked) {
			return nil, r.db.Request(asked, unasked...)
		}
	}
	defer r.forceLog(staged)()
	if err := r.owedPrefix(); err != nil {
		return nil, err
	}
	recs, err := r.db.List()
	if err != nil {
		return nil, err
	}
	incoming := make([]*db.Record, len(staged))
	for i, s := range staged {
		incoming[i] = s.rec
	}
	carried, err := r.carry(slices.AppendSeq(slices.Clone(requests), maps.Values(at)), recs, incoming, remove)
	if err != nil {
		return nil, err
	}
	for k := range keyed(nil, nil, drop, recs, incoming, remove, carried...) {
		r.askedFor()[k] = true // an upgraded npm package's commands follow its request
	}
	if err := checkApply(recs, incoming, remove, func(p *db.Record) []repo.Command { return r.bins(p.Kind, p.Name, p.Version, p.Bin) }); err != nil {
		return nil, err
	}
	if err := r.checkUnmanaged(recs, incoming); err != nil {
		return nil, err
	}
	if err := r.checkFoldedNames(recs, incoming, remove); err != nil {
		return nil, err
	}
	asked := keyed(requests, at, drop, recs, incoming, remove, carried...)
	unasked := unaskedOf(drop, asked)
	plan, err := r.prefixChange(recs, staged, remove, asked, unasked)
	if err != nil {
		return nil, err
	}
	svs, err := r.findChanges(recs, staged, remove)
	if err != nil {
		return nil, err
	}
	defer func() { // unless the commit is done, or its outcome unknown and the next start decides
		for _, sv := range svs {
			sv.drop()
		}
	}()
	ins, made, err := r.intents(recs, staged, remove)
	var rins []db.Intent
	if err == nil {
		rins, err = r.removeIntents(remove)
	}
	if err != nil {
		r.dropPending(staged, made) // no intent names them
		return nil, err
	}
	if err := r.markOld(svs, staged, rins); err != nil {
		r.dropPending(staged, made)
		return nil, err
	}
	pc := &db.PrefixChange{Paths: plan.recorded, Pending: pending(staged, rins, plan), Folded: plan.folded}
	pc.Stamp = stamped(pc.Pending)
	trash := rins // until emptied after the commit
	defer func() { r.dropTrash(trash) }()
	all := append(ins, rins...)
	firstIn, first := r.firstChange(recs, staged, remove, plan)
	if first {
		all = append(all, firstIn)
	}
	if err := r.db.SetIntents(all); err != nil {
		r.dropPending(staged, made) // nothing moved: the links prepared for it go
		return nil, changeError(staged, remove, err)
	}
	if err := r.moveTrees(ctx, staged, rins, all, made); err != nil {
		return nil, err
	}
	// The trees and the renames reach the disk together, after the intents and before the
	// records' meta page: by commitTrees' sync, or on XFS and ext4 by the records' first
	// (carry). From here a failed fsync or write is not retried (see rollback): the trees
	// go back and the intents stay for the next start to complete. A first change's are
	// made durable with its records and its prefix by the roll-forward's one commit
	// (db.PrefixChange.Sync); but not trees whose files' write-back was only started
	// (Staged.whole): a transaction commit writes no delayed allocation, so one the
	// filesystem runs on its own between the records' write-back and the syncfs would keep
	// the records without the files' data.
	if first && !slices.ContainsFunc(staged, func(s *Staged) bool { return s.whole }) {
		pc.Sync = func() error { return r.commitTrees(staged) }
	} else if err := r.commitTrees(staged); err != nil {
		return nil, changeError(staged, remove, errors.Join(err, r.rollbackAll(staged, all)))
	}
	now := time.Now().UTC()
	news, files := make([]*db.Record, len(staged)), make([]*db.FileList, len(staged))
	for i, s := range staged {
		s.rec.Installed = now
		news[i], files[i] = s.rec, s.files
	}
	for _, s := range sayings {
		if !s.commands || r.commandsAfter(staged) {
			r.db.PutSaidWithCommit(s.key, s.state)
		}
	}
	if err := r.db.CommitRequested(news, files, remove, keyed(requests, at, drop, recs, news, remove, carried...), pc, unasked...); err != nil {
		if done, known := r.recorded(all); done || !known { // or the next start finds out
			keep(staged)
			svs, trash = nil, nil // the next start keeps the marked trees
			return nil, changeError(staged, remove, err)
		}
		return nil, changeError(staged, remove, errors.Join(err, r.rollbackAll(staged, all)))
	}
	results := make([]*Result, len(staged))
	for i, s := range staged {
		s.res.Commit = time.Since(start)
		results[i] = s.res
	}
	// The prefix follows the records, before the old trees it compares with go. Where it
	// cannot, the old trees and the salvage markers stay for the next start, which
	// finishes it.
	if testHookRecorded != nil && testHookRecorded() {
		keep(staged)
		svs, trash = nil, nil
		return results, nil
	}
	if err := r.rollForward(pc.Pending, &known{staged: staged, owners: plan.paths}); err != nil {
		keep(staged)
		svs, trash = nil, nil
		// A first change's records are durable only with the commit that ends the
		// roll-forward: where that fails, nothing says the change is recorded (a
		// *LinksError would), and the next start decides, as where the records' own
		// sync fails.
		if first {
			if cerr := r.commitPrefix(); cerr != nil {
				return nil, changeError(staged, remove, errors.Join(err, cerr))
			}
		}
		r.unlinked = &LinksError{Dir: r.dir, Prefix: true, Err: err}
		return results, r.unlinked
	}
	for _, sv := range svs { // before the trees go
		s, ok := sv.keep()
		r.salvaged = append(r.salvaged, s)
		if !ok { // left, with its marker, for the next start
			for _, st := range staged {
				st.keep = st.keep || st.rec.Key() == sv.rec.Key()
			}
			trash = slices.DeleteFunc(trash, func(in db.Intent) bool { return in.Name == sv.rec.Key() })
		}
	}
	svs = nil
	// The space of the trees replaced or removed first: bin/ may need some. Links still to
	// make stay prepared (.cmd.new), which tells the next start to finish them.
	r.emptyTrash(trash)
	trash = nil
	r.Discard(staged...)
	if testHookTrashed != nil && testHookTrashed() {
		return results, nil
	}
	if err := errors.Join(r.ownLinks(staged), r.syncBins(true), r.checkLinked(staged)); err != nil {
		return results, &LinksError{Dir: r.path("bin"), Err: err}
	}
	return results, nil
}

// carry returns the recorded requests of the npm instances remove takes out where staged
// installs another version of the name, by key: an upgrade of an npm package is its old
// version's removal and the new one's install, and what was asked for stays so; but not
// where one of requests (Request) on the name allows the instance removed, or has a
// constraint and allows an instance staged (an upgrade to it moved the one asked for):
// it replaces it. recs are the installed records.
func (r *Root) carry(requests []repo.Requirement, recs []db.Record, staged []*db.Record, remove []string) ([]repo.Requirement, error) {
	if len(staged) == 0 || len(remove) == 0 {
		return nil, nil
	}
	recorded, err := r.db.Requested()
	if err != nil {
		return nil, err
	}
	var carried []repo.Requirement
	for _, rec := range recs {
		q, ok := recorded[rec.Key()]
		if !ok || !slices.Contains(remove, rec.Key()) || !slices.ContainsFunc(staged, func(s *db.Record) bool { return s.Kind == repo.KindNPM && s.Name == q.Name }) {
			continue
		}
		replaced := func(o repo.Requirement) bool {
			return o.Name == q.Name && (o.AllowsOf(rec.Kind, rec.Version) ||
				len(o.Constraints) > 0 && slices.ContainsFunc(staged, func(s *db.Record) bool {
					return s.Kind == repo.KindNPM && s.Name == q.Name && o.AllowsOf(s.Kind, s.Version)
				}))
		}
		if !slices.ContainsFunc(requests, replaced) {
			carried = append(carried, q)
		}
	}
	return carried, nil
}

// keyed returns requests (Request) by the key of the package each names in the root a
// commit leaves, holding recs, but remove, and staged: the name's package, asked for by
// every request on the name together, or of an npm name's instances the newest each
// request allows (two that take one instance together); then those of at (RequestAt) on
// their keys, in the root; then each of carried (carry) by the newest instance of its
// name it allows that no request went to, but not to a key of drop (Unrequest).
func keyed(requests []repo.Requirement, at map[string]repo.Requirement, drop []string, recs []db.Record, staged []*db.Record, remove []string, carried ...repo.Requirement) map[string]repo.Requirement {
	next := make(map[string]*db.Record, len(recs)+len(staged))
	for i := range recs {
		next[recs[i].Key()] = &recs[i]
	}
	for _, k := range remove {
		delete(next, k)
	}
	for _, s := range staged {
		next[s.Key()] = s
	}
	m := newMeets(next)
	out := make(map[string]repo.Requirement, len(requests))
	for _, q := range requests {
		for _, p := range m.byName[q.Name] {
			if p.Kind != repo.KindNPM || q.AllowsOf(p.Kind, p.Version) {
				if o, ok := out[p.Key()]; ok {
					q = o.With(q)
				}
				out[p.Key()] = q
				break
			}
		}
	}
	for k, q := range at {
		if next[k] != nil {
			out[k] = q
		}
	}
	for _, q := range carried {
		for _, p := range m.byName[q.Name] {
			if _, taken := out[p.Key()]; !taken && q.Allows(p.Version) && !slices.Contains(drop, p.Key()) {
				out[p.Key()] = q
				break
			}
		}
	}
	return out
}

// unaskedOf returns the keys of drop (Unrequest) that asked (keyed) does not ask for.
func unaskedOf(drop []string, asked map[string]repo.Requirement) []string {
	var out []string
	for _, k := range drop {
		if _, ok := asked[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// owedPrefix finishes the roll-forward of the prefix a commit left, which the start could
// not (Links), before a change records its own in its place; where it still cannot, it
// refuses the change, which would lose it: that commit's old paths would stay in the
// prefix, no package's. The old trees it compared with stay for the next start to empty.
func (r *Root) owedPrefix() error {
	p, done, err := r.db.Prefix()
	if err != nil || p == nil || done {
		return err
	}
	if err := r.rollForward(p, nil); err != nil {
		// Not a *LinksError, which says this change was committed.
		return fmt.Errorf("nothing was changed, as %s still lacks the links of a change before, which the next command makes once this is fixed: %w", r.dir, err)
	}
	r.unlinked = nil
	return nil
}

// testHookRecorded, where a test sets it, runs once Apply recorded a change; returning
// true, it has Apply end there, as a crash would between the records and the prefix.
var testHookRecorded func() bool

// testHookTrashed, where a test sets it, runs once Apply emptied the trash; returning true,
// it has Apply end there, as a crash would before bin/'s sync.
var testHookTrashed func() bool

// moveTrees swaps each staged tree into pkgs/ and renames each tree of rins (the intents
// of removals, after those of staged in all) to the trash, until ctx is done; on an error
// it puts back what it moved (undoAll).
func (r *Root) moveTrees(ctx context.Context, staged []*Staged, rins, all []db.Intent, made *prepared) error {
	for i, s := range staged {
		err := ctx.Err()
		if err == nil {
			err = r.swapIn(place{staging, s.name}, treeOf(s.rec.Key()))
		}
		if err != nil {
			return fmt.Errorf("install %s %s: %w", s.rec.Name, s.rec.Version, errors.Join(err, r.undoAll(staged, all, i, made)))
		}
	}
	for j, in := range rins {
		// A tree already deleted by hand leaves nothing to move: the record goes all the same.
		if _, ok := r.inode(treeOf(in.Name)); !ok {
			continue
		}
		to, _ := placeOf(in.Staging) // a name trashName picked
		err := ctx.Err()
		if err == nil {
			err = r.rename(treeOf(in.Name), to)
		}
		if err != nil {
			return fmt.Errorf("remove %s: %w", in.Name, errors.Join(err, r.undoAll(staged, all, len(all)-len(rins)+j, made)))
		}
	}
	return nil
}

// checkUnmanaged refuses to install a package of staged where pkgs/ holds a directory of its
// name that no record owns: it is not pkg's to replace (someone made it by hand, or copied
// it in).
func (r *Root) checkUnmanaged(recs []db.Record, staged []*db.Record) error {
	installed := named(recs)
	for _, s := range staged {
		if installed[s.Key()] != nil {
			continue
		}
		if _, ok := r.inode(treeOf(s.Key())); ok {
			return fmt.Errorf("install %s %s: %w", s.Name, s.Version, &unmanagedError{Path: r.pkgDir(s.Key())})
		}
	}
	return nil
}

// A FoldedNamesError refuses to install Name beside Other, which differs from it only in
// case (npm's JSONStream and jsonstream), where the root's directory Dir folds names:
// there their trees (pkgs/NAME@VERSION) and node_modules paths would be one.
type FoldedNamesError struct{ Name, Other, Dir string }

func (e *FoldedNamesError) Error() string {
	return fmt.Sprintf("install %s: %s and %s differ only in case, and %s folds names: their directories would be one", e.Name, e.Name, e.Other, e.Dir)
}

// checkFoldedNames refuses a package of staged whose name differs only in case from
// another's of recs that stays, or of staged, where pkgs/ folds names (*FoldedNamesError).
func (r *Root) checkFoldedNames(recs []db.Record, staged []*db.Record, remove []string) error {
	leaving := make(map[string]bool, len(remove))
	for _, k := range remove {
		leaving[k] = true
	}
	names := make(map[string]string) // a name in lower case → the name
	for i := range recs {
		if !leaving[recs[i].Key()] {
			names[strings.ToLower(recs[i].Name)] = recs[i].Name
		}
	}
	for _, s := range staged {
		other, ok := names[strings.ToLower(s.Name)]
		if ok && other != s.Name {
			if fold, err := dirFolds(r.fd[pkgs], r.path("pkgs")); err != nil || fold {
				return cmp.Or(err, error(&FoldedNamesError{Name: s.Name, Other: other, Dir: r.path("pkgs")}))
			}
		}
		names[strings.ToLower(s.Name)] = s.Name
	}
	return nil
}

// Dependents returns the keys (db.Record.Key) of the packages of recs, the installed ones,
// that the removal of the packages remove (keys) would leave with a dependency nothing
// left meets: those checkApply would name in refusing it. A removal can take them along
// where no package asked for needs them (txn's removal plan).
func Dependents(recs []db.Record, remove []string) []string {
	next := make(map[string]*db.Record, len(recs))
	for i := range recs {
		next[recs[i].Key()] = &recs[i]
	}
	for _, key := range remove {
		delete(next, key)
	}
	names := slices.Sorted(maps.Keys(next))
	meets, installed := newMeets(next), named(recs)
	var out []string
	for _, gone := range remove {
		if old := installed[gone]; old != nil {
			users, _ := unmetBy(next, names, meets, old)
			out = append(out, users...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unmetBy returns the keys of the packages of next (the root after a change, by key;
// names its keys, sorted) with a dependency that old, a package the change removes, met
// and that nothing of next meets, and each as "NAME VERSION", with the requirement where
// old met it through a provides or among alternatives.
func unmetBy(next map[string]*db.Record, names []string, meets *meets, old *db.Record) (users, versions []string) {
	for _, name := range names {
		deps := required(next[name])
		i := slices.IndexFunc(deps, func(d repo.Requirement) bool {
			return !meets.met(d) && d.Met(old.Kind, old.Name, old.Version, old.Provides)
		})
		if i < 0 {
			continue
		}
		v := next[name].Name + " " + next[name].Version
		if d := deps[i]; d.Name != old.Name || len(d.Or) > 0 { // met through a provides or with alternatives
			v += " (for " + d.String() + ")"
		}
		users, versions = append(users, name), append(versions, v)
	}
	return users, versions
}

// checkApply refuses a change to recs, the installed packages, installing the records
// staged, that would leave two packages providing one command where neither replaces the
// other (*clashError, or *strandedError where it removes or upgrades what stood between
// them), a package
// whose dependency nothing meets (repo.Requirement.Met: a package of one of its
// alternatives' names at a version allowed, or one that provides it) where the change
// removed or replaced what met it or installs the package, or an incoming package and
// another that conflicts with it (ErrDependency); and the removal of a package not
// installed. bins gives the commands of a package that bin/ holds (Root.bins).
func checkApply(recs []db.Record, staged []*db.Record, remove []string, bins func(*db.Record) []repo.Command) error {
	next := make(map[string]*db.Record, len(recs)+len(staged)) // what the root would hold
	for i := range recs {
		next[recs[i].Key()] = &recs[i]
	}
	for _, key := range remove {
		if next[key] == nil {
			return fmt.Errorf("remove %s: not installed", key)
		}
		delete(next, key)
	}
	for _, s := range staged {
		next[s.Key()] = s
	}
	names := slices.Sorted(maps.Keys(next))
	incoming := keysOf(staged)
	if err := checkStacks(recs, next, staged, remove, bins); err != nil {
		return err
	}
	meets, installed := newMeets(next), named(recs)
	for _, gone := range remove {
		if users, versions := unmetBy(next, names, meets, installed[gone]); len(users) > 0 {
			e := &DependentsError{Removed: *installed[gone], Versions: versions}
			for _, u := range users {
				e.By = append(e.By, *next[u])
			}
			return e
		}
	}
	for _, name := range names {
		for _, req := range required(next[name]) {
			if meets.met(req) {
				continue
			}
			other, p := meets.named(req.Name), next[name]
			switch {
			case other != nil && incoming[other.Key()]:
				return dependencyError("install %s %s: %s %s depends on %s", req.Name, other.Version, p.Name, p.Version, req)
			case incoming[name] && other == nil:
				return dependencyError("install %s %s: it depends on %s, which is not installed", p.Name, p.Version, req)
			case incoming[name]:
				return dependencyError("install %s %s: it depends on %s, and %s %s is installed", p.Name, p.Version, req, req.Name, other.Version)
			}
		}
	}
	// A staged package without conflicts of its own can conflict only with a package that
	// lists some: it is checked against those alone.
	conflicting := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return len(next[n].Conflicts) == 0 })
	for _, s := range staged {
		among := conflicting
		if len(s.Conflicts) > 0 {
			among = names
		}
		switch q, c, theirs := meets.conflict(s, among); {
		case q == nil:
		case theirs:
			return dependencyError("install %s %s: %s %s conflicts with it (its conflicts list %s)", s.Name, s.Version, q.Name, q.Version, c)
		default:
			return dependencyError("install %s %s: it conflicts with %s %s (its conflicts list %s)", s.Name, s.Version, q.Name, q.Version, c)
		}
	}
	return nil
}

// required returns what p needs installed: its depends, and an npm package's peers, which
// are installed and linked as its dependencies are.
func required(p *db.Record) []repo.Requirement {
	return append(slices.Clip(p.Depends), p.Peers...)
}

// meets tells whether the packages a root would hold meet a requirement, by
// repo.Requirement.Met: a package of one of its alternatives' names, or one that provides
// it.
type meets struct {
	next     map[string]*db.Record   // by key
	byName   map[string][]*db.Record // name → its packages: several for an npm name's instances, newest first
	provided map[string][]*db.Record // virtual name → the packages providing it
}

func newMeets(next map[string]*db.Record) *meets {
	m := &meets{next: next, byName: make(map[string][]*db.Record), provided: make(map[string][]*db.Record)}
	for _, p := range next {
		m.byName[p.Name] = append(m.byName[p.Name], p)
		for _, v := range p.Provides {
			m.provided[v.Name] = append(m.provided[v.Name], p)
		}
	}
	for _, ps := range m.provided {
		slices.SortFunc(ps, func(a, b *db.Record) int { return strings.Compare(a.Key(), b.Key()) })
	}
	for _, ps := range m.byName {
		slices.SortFunc(ps, func(a, b *db.Record) int {
			return repo.Package{Kind: b.Kind, Version: b.Version}.CompareVersion(repo.Package{Kind: a.Kind, Version: a.Version})
		})
	}
	return m
}

// named returns the newest package of name the root would hold, or nil.
func (m *meets) named(name string) *db.Record {
	if ps := m.byName[name]; len(ps) > 0 {
		return ps[0]
	}
	return nil
}

func (m *meets) met(req repo.Requirement) bool { return m.by(req) != nil }

// by returns the package that meets req: for each of its alternatives in order, the
// package of its name, then those providing it, by name; or nil.
func (m *meets) by(req repo.Requirement) *db.Record {
	for a := range req.Alternatives() {
		if p := m.byOne(a); p != nil {
			return p
		}
	}
	return nil
}

// byOne is by of one alternative.
func (m *meets) byOne(a repo.Requirement) *db.Record {
	for _, p := range m.byName[a.Name] {
		if a.Met(p.Kind, p.Name, p.Version, p.Provides) {
			return p
		}
	}
	for _, p := range m.provided[a.Name] {
		if a.Met(p.Kind, p.Name, p.Version, p.Provides) {
			return p
		}
	}
	return nil
}

// conflict returns the first of names, the packages the root would hold, sorted, that p
// conflicts with or that conflicts with p (theirs), with the conflicts entry that matches
// (met as a dependency would be); or a nil q.
func (m *meets) conflict(p *db.Record, names []string) (q *db.Record, c repo.Requirement, theirs bool) {
	for _, name := range names {
		if q = m.next[name]; q.Name == p.Name {
			continue
		}
		if i := slices.IndexFunc(p.Conflicts, func(c repo.Requirement) bool { return c.Met(q.Kind, q.Name, q.Version, q.Provides) }); i >= 0 {
			return q, p.Conflicts[i], false
		}
		if i := slices.IndexFunc(q.Conflicts, func(c repo.Requirement) bool { return c.Met(p.Kind, p.Name, p.Version, p.Provides) }); i >= 0 {
			return q, q.Conflicts[i], true
		}
	}
	return nil, repo.Requirement{}, false
}

// pending returns the roll-forward of a commit of staged, removing the packages of rins,
// whose installed trees and generated paths plan describes (prefixChange): each old tree
// is where the commit leaves it, an upgrade's at its staged tree's place, a removal's in
// the trash, and its folded directories go back into it.
func pending(staged []*Staged, rins []db.Intent, plan *prefixPlan) *db.Pending {
	p := &db.Pending{Old: plan.olds, Folds: plan.folds, Links: plan.links, OldLinks: plan.oldLinks}
	for _, s := range staged {
		p.New = append(p.New, s.rec.Key())
	}
	for i := range p.Old {
		if j := slices.IndexFunc(staged, func(s *Staged) bool { return s.rec.Key() == p.Old[i].Name }); j >= 0 {
			p.Old[i].Tree = relOf(place{staging, staged[j].name})
		} else if j := slices.IndexFunc(rins, func(in db.Intent) bool { return in.Name == p.Old[i].Name }); j >= 0 {
			p.Old[i].Tree = rins[j].Staging
		}
		for j := range p.Folds {
			if f := &p.Folds[j]; f.Name == p.Old[i].Name && f.Old != 0 && f.Back == "" {
				f.Back = p.Old[i].Tree
			}
		}
	}
	return p
}

// removeIntents picks a name in the trash for each package to remove and returns the
// intents of their removal.
func (r *Root) removeIntents(remove []string) ([]db.Intent, error) {
	ins := make([]db.Intent, 0, len(remove))
	for _, name := range remove {
		to, err := r.trashName(name)
		if err != nil {
			return nil, fmt.Errorf("remove %s: %w", name, err)
		}
		ins = append(ins, db.Intent{Op: "remove", Name: name, Staging: relOf(to)})
	}
	return ins, nil
}

// trashName returns a place in the trash that nothing has: the tree is renamed to it,
// which takes no new inode or block, so a remove works on a full filesystem.
func (r *Root) trashName(key string) (place, error) {
	return r.freeName(trash, repo.FileName(key))
}

// freeName returns a place in the part in, named base (its first maxFreeBase bytes) and a
// random number, that nothing has. The root's lock keeps others from taking it meanwhile.
func (r *Root) freeName(in part, base string) (place, error) {
	base = base[:min(len(base), maxFreeBase)]
	for {
		p := place{in, base + "." + strconv.FormatUint(uint64(rand.Uint32()), 10)}
		var st unix.Stat_t
		if err := r.stat(p, &st); errors.Is(err, unix.ENOENT) {
			return p, nil
		} else if err == nil {
			continue
		} else {
			return place{}, &os.PathError{Op: "lstat", Path: r.pathOf(p), Err: err}
		}
	}
}

// maxFreeBase is the most of a base freeName keeps: with the dot and a uint32's digits,
// a name of NAME_MAX bytes.
const maxFreeBase = unix.NAME_MAX - len(".4294967295")

// dropTrash deletes the trees removal intents moved to the trash, unless an intent is
// still pending: then the next start decides.
func (r *Root) dropTrash(ins []db.Intent) {
	if len(ins) == 0 {
		return
	}
	if done, _ := r.recorded(ins); done {
		r.emptyTrash(ins)
	}
}

// markOld marks, before the commit, where it will leave each tree svs keep from: the staged
// tree's place for a tree it replaces (since the swap), its place in the trash for one it
// removes.
func (r *Root) markOld(svs []*salvage, staged []*Staged, rins []db.Intent) error {
	for _, sv := range svs {
		var tree place
		if i := slices.IndexFunc(staged, func(s *Staged) bool { return s.rec.Key() == sv.rec.Key() }); i >= 0 {
			tree = place{staging, staged[i].name}
		} else {
			i := slices.IndexFunc(rins, func(in db.Intent) bool { return in.Name == sv.rec.Key() })
			tree, _ = placeOf(rins[i].Staging)
		}
		if err := sv.mark(tree); err != nil {
			return fmt.Errorf("keep what the user changed in %s: %w", sv.rec.Name, err)
		}
	}
	return nil
}

// emptyTrash deletes the trees removal intents moved to the trash, once recorded.
func (r *Root) emptyTrash(ins []db.Intent) {
	for _, in := range ins {
		if p, ok := placeOf(in.Staging); ok {
			r.removeTree(p)
		}
	}
}

// keep leaves staged trees to the next start (reconcile) instead of Discard: after a
// failure past the intents, one of them may be the only copy of a tree the database still
// describes, or may describe again once an unsynced write is lost.
func keep(staged []*Staged) {
	for _, s := range staged {
		s.keep = true
	}
}

// recorded reports whether none of ins is pending any more, and whether it could tell: a
// database write that failed after its meta page was written (in its last fdatasync) may
// have committed, and then the trees must not go back under the new records.
func (r *Root) recorded(ins []db.Intent) (done, known bool) {
	pending, err := r.db.Intents()
	if err != nil {
		return false, false
	}
	for _, p := range pending {
		for _, in := range ins {
			if p.Name == in.Name && p.Staging == in.Staging {
				return false, true
			}
		}
	}
	return true, true
}

// ErrDependency is what a change is refused with that would leave an installed package
// without a dependency at a version it allows, or that installs one beside a package it
// conflicts with.
var ErrDependency = errors.New("install: dependency not met")

// NeededError refuses a removal that would leave packages asked for without a
// dependency, directly or through others that would go with it (txn's removal plan),
// naming every package asked for that would have to go too. It is an ErrDependency.
type NeededError struct {
	Remove  []string               // the packages asked to be removed, by key (db.Record.Key)
	By      []db.Record            // the packages asked for that need them, directly or through others
	Through map[string][]db.Record // of By, by key: what it needs that would go, taken along or of By; none where it needs one of Remove itself
}

func (e *NeededError) Error() string {
	by := versions(e.By)
	for i, r := range e.By {
		if through := e.Through[r.Key()]; len(through) > 0 {
			by[i] += " (through " + units.Some(versions(through), maxDependentsNamed) + ")"
		}
	}
	verb, it := "needs", "it"
	if len(e.By) > 1 {
		verb = "need"
	}
	if len(e.Remove) > 1 {
		it = "them"
	}
	if !namedWhole(len(e.By)) {
		return fmt.Sprintf("remove %s: %d packages asked for %s %s: %s: remove them too, or first", strings.Join(e.Remove, " "), len(e.By), verb, it,
			units.Some(by, maxDependentsNamed))
	}
	keys := make([]string, len(e.By))
	for i, r := range e.By {
		keys[i] = r.Key()
	}
	return fmt.Sprintf("remove %s: %s, asked for, %s %s: remove %s too, or first", strings.Join(e.Remove, " "), units.List(by, 0), verb, it, strings.Join(keys, " "))
}

// NamesAll reports whether e's message names every package of By and of Through.
func (e *NeededError) NamesAll() bool {
	for _, t := range e.Through {
		if !namedWhole(len(t)) {
			return false
		}
	}
	return namedWhole(len(e.By))
}

// versions names each of rs as "NAME VERSION".
func versions(rs []db.Record) []string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.Name + " " + r.Version
	}
	return s
}

func (e *NeededError) Is(target error) bool { return target == ErrDependency }

// UnknownDependenciesError refuses a removal that installed packages recorded Bare
// (db.Record.Bare), which stay, may need: a repair recorded them without their
// dependencies and no index read describes their archives, so nothing tells that they do
// not need what the removal takes (txn's removal plan).
type UnknownDependenciesError struct {
	Remove []string    // the packages asked to be removed, by key (db.Record.Key)
	Bare   []db.Record // the Bare records that stay, whose dependencies are unknown
}

func (e *UnknownDependenciesError) Error() string {
	what := "it may need what goes (a repair recorded it from its tree alone, and no index read offers its archive)"
	if len(e.Bare) > 1 {
		what = "they may need what goes (a repair recorded them from their trees alone, and no index read offers their archives)"
	}
	return fmt.Sprintf("remove %s: the dependencies of %s are unknown, so %s", strings.Join(e.Remove, " "), units.Some(versions(e.Bare), maxDependentsNamed), what)
}

// DependentsError refuses the removal of a package that packages the change leaves depend
// on, nothing else meeting what they need of it. It is an ErrDependency.
type DependentsError struct {
	Removed  db.Record   // the package removed
	By       []db.Record // the packages that depend on it, those asked for first (ByAsked)
	Versions []string    // of By, "NAME VERSION", with the requirement where Remove met it through a provides or among alternatives
	// Asked says that Removed was asked for (db.DB.Requested), which a removal alone undoes;
	// ByAsked is how many of By, first, were asked for. The caller that knows the
	// requests sets them (AskedFirst).
	Asked   bool
	ByAsked int
}

// maxDependentsNamed is how many of the packages depending on a package whose removal is
// refused its message names: libc6's dependents are most of a system.
const maxDependentsNamed = 5

// namedWhole reports whether a message names each of n packages: at most one more than
// maxDependentsNamed, as units.Some names the one it would count as "1 more".
func namedWhole(n int) bool { return n <= maxDependentsNamed+1 }

// AskedFirst orders e.By, and e.Versions with it, those asked reports were asked for
// first, and sets e.ByAsked.
func (e *DependentsError) AskedFirst(asked func(key string) bool) {
	idx := make([]int, len(e.By))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmpBool(asked(e.By[b].Key()), asked(e.By[a].Key()))
	})
	by, versions := make([]db.Record, len(idx)), make([]string, len(idx))
	e.ByAsked = 0
	for i, j := range idx {
		by[i], versions[i] = e.By[j], e.Versions[j]
		if asked(by[i].Key()) {
			e.ByAsked++
		}
	}
	e.By, e.Versions = by, versions
}

// NamesAll reports whether e's message names every package of By.
func (e *DependentsError) NamesAll() bool { return namedWhole(len(e.By)) }

func (e *DependentsError) Error() string {
	if !e.NamesAll() {
		asked := e.Versions[:min(e.ByAsked, maxDependentsNamed)]
		others := e.Versions[e.ByAsked:][:min(len(e.By)-e.ByAsked, maxDependentsNamed-len(asked))]
		var named []string
		if len(asked) > 0 {
			named = append(named, strings.Join(asked, ", ")+", asked for")
		}
		if len(others) > 0 {
			named = append(named, strings.Join(others, ", "))
		}
		return fmt.Sprintf("remove %s: %d packages depend on it: %s, and %d more (remove them too, or first)",
			e.Removed.Key(), len(e.By), strings.Join(named, ", and "), len(e.By)-len(asked)-len(others))
	}
	verb, keys := "depends", make([]string, len(e.By))
	if len(e.By) > 1 {
		verb = "depend"
	}
	for i, r := range e.By {
		keys[i] = r.Key()
	}
	return fmt.Sprintf("remove %s: %s %s on it (remove %s too, or first)", e.Removed.Key(), units.List(e.Versions, 0), verb, strings.Join(keys, " "))
}

func (e *DependentsError) Is(target error) bool { return target == ErrDependency }

// dependencyError is an ErrDependency worded by format and args.
func dependencyError(format string, args ...any) error {
	return &reasonError{fmt.Sprintf(format, args...), ErrDependency, nil}
}

// changeError names the packages of a change that failed as a whole.
func changeError(staged []*Staged, remove []string, err error) error {
	var parts []string
	if len(staged) > 0 {
		names := make([]string, len(staged))
		for i, s := range staged {
			names[i] = s.rec.Name + " " + s.rec.Version
		}
		parts = append(parts, "install "+strings.Join(names, ", "))
	}
	if len(remove) > 0 {
		parts = append(parts, "remove "+strings.Join(remove, ", "))
	}
	return fmt.Errorf("%s: %w", strings.Join(parts, "; "), err)
}

// intents notes what each staged package replaces among recs, prepares the command links
// the change makes and returns the intents of its commit, and the links it prepared.
func (r *Root) intents(recs []db.Record, staged []*Staged, remove []string) ([]db.Intent, *prepared, error) {
	ins := make([]db.Intent, len(staged))
	made := &prepared{staged: make([][]string, len(staged))}
	installed := named(recs)
	next := named(slices.Clone(recs)) // what the root holds once committed, for the commands' libraries and holders
	for _, k := range remove {
		delete(next, k)
	}
	incoming := make(map[string]bool, len(staged))
	for _, s := range staged {
		next[s.rec.Key()] = s.rec
		incoming[s.rec.Key()] = true
	}
	changed := maps.Clone(incoming)
	for _, k := range remove {
		changed[k] = true
	}
	libs := newLibIndex(next)
	holds, err := r.holders(next, incoming)
	if err != nil {
		return nil, made, err
	}
	held, _ := r.holders(installed, nil) // nothing incoming: no clash
	if made.others, err = r.prepareOthers(libs, held, holds, installed, next, incoming, changed); err != nil {
		return nil, made, changeError(staged, remove, err)
	}
	for i, s := range staged {
		if old := installed[s.rec.Key()]; old != nil {
			s.res.Previous, s.res.Again = old.Version, old.Version == s.rec.Version && old.SHA256 == s.rec.SHA256
		}
		tree := place{staging, s.name}
		ino, ok := r.inode(tree)
		if !ok {
			return nil, made, fmt.Errorf("install %s %s: staged tree %s is gone", s.rec.Name, s.rec.Version, r.pathOf(tree))
		}
		if made.staged[i], err = r.prepareLinks(libs, holds, s); err != nil {
			return nil, made, fmt.Errorf("install %s %s: %w", s.rec.Name, s.rec.Version, err)
		}
		old, _ := r.inode(treeOf(s.rec.Key()))
		ins[i] = db.Intent{Op: "install", Name: s.rec.Key(), Staging: relOf(tree), Inode: ino, OldInode: old}
	}
	return ins, made, nil
}

// undoAll puts back the trees of the first n intents, whose swaps or renames were done,
// clears every intent (nothing failed that a retry could mask) and removes the command
// links made for the commit. If that fails, the staged trees are kept for the next start.
func (r *Root) undoAll(staged []*Staged, ins []db.Intent, n int, made *prepared) error {
	err := r.rollbackAll(staged, ins[:n])
	if err == nil {
		err = r.undo(ins)
	}
	if err != nil {
		keep(staged)
		return err
	}
	r.dropPending(staged, made)
	return nil
}

// rollbackAll puts back the trees of ins, the last swapped first, leaving the intents. If
// one cannot go back, the staged trees are kept for the next start.
func (r *Root) rollbackAll(staged []*Staged, ins []db.Intent) error {
	var errs []error
	for _, in := range slices.Backward(ins) {
		errs = append(errs, r.rollback(in))
	}
	err := errors.Join(errs...)
	if err != nil {
		keep(staged)
	}
	return err
}

// forceLogFiles is the fewest files a change stages for Apply to start the journal's write
// early (forceLog). Below, planning the change takes less time than the write, and a
// one-file install would send the disk one cache flush more.
const forceLogFiles = 1024

// forceLog starts writing the journal of a filesystem that logs in order (XFS, ext4) up to
// the staged trees' last change, on a goroutine, and returns a function that waits for it:
// the disk then works while Apply plans the change, and the records' first sync, which
// carries it all (commitTrees), finds little left (the npm tree of bench/peers.sh: that
// sync took 20-117 ms, and 2-4 ms after this one). An fsync of the tree staged last forces
// the log up to its inode's last change, the chmod that ended its staging, and so all of
// the log before it; an error is left to the records' sync, which meets it again.
func (r *Root) forceLog(staged []*Staged) func() {
	if !r.forcesLog(staged) {
		return func() {}
	}
	last := slices.MaxFunc(staged, func(a, b *Staged) int { return a.ended.Compare(b.ended) })
	// Opened here, not on the goroutine: moveTrees may rename the tree out of staging
	// before the goroutine runs, which would then find nothing to force.
	fd, err := r.open(place{staging, last.name}, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		unix.Fsync(fd)
		unix.Close(fd)
	}()
	return func() { <-done }
}

// forcesLog reports whether forceLog writes the journal early for staged: where the commit
// syncs, the records' sync carries the trees (not Staged.whole), and they hold
// forceLogFiles files or more.
func (r *Root) forcesLog(staged []*Staged) bool {
	if r.o.NoSync || !r.filesys().Ordered() || slices.ContainsFunc(staged, func(s *Staged) bool { return s.whole }) {
		return false
	}
	files := 0
	for _, s := range staged {
		files += s.rec.Files
	}
	return files >= forceLogFiles
}

// firstOp is the operation of the intent of a first change (firstChange), which names the
// root's entries its prefix adds: undoing it moves them aside (unroll).
const firstOp = "first"

// firstChange returns the intent of a first change and whether the change is one: the
// first into a root this command made (its directory was not there, Open created the
// database) on btrfs, installing staged, removing nothing, finding nothing recorded, and
// whose intent can be kept as a name. The intent names the root's entries its prefix adds
// (the first components of its paths), which a start moves aside (unroll). Why one
// transaction commit makes such a change durable: design.md, A first change.
func (r *Root) firstChange(recs []db.Record, staged []*Staged, remove []string, plan *prefixPlan) (db.Intent, bool) {
	fs := r.filesys()
	if r.o.NoSync || !fs.Tracks() || fs.Ordered() || len(r.made.dirs) == 0 || !r.db.Created() || len(recs) > 0 || len(remove) > 0 || len(staged) == 0 {
		return db.Intent{}, false
	}
	var tops []string
	for p := range plan.paths {
		t, _, _ := strings.Cut(p, "/")
		tops = append(tops, t)
	}
	slices.Sort(tops)
	in := db.Intent{Op: firstOp, Name: db.FirstIntent, Staging: strings.Join(slices.Compact(tops), "/")}
	return in, db.IntentFits(in)
}
