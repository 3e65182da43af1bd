package txn

import "pkg/repo"

// CheckCached is checkCached for TestCheckCached, which checks what it says of packages a
// lockfile pins (byLock) as well as of an index's.
var CheckCached = checkCached

// Packages returns the packages the plan installs, in order, for the tests of package
// txn_test: Apply reads them itself.
func (p *Plan) Packages() []repo.Package { return p.install }

// LargestFirst is largestFirst for TestLargestFirst.
var LargestFirst = largestFirst
