package txn

// CheckCached is checkCached for TestCheckCached, which checks what it says of packages a
// lockfile pins (byLock) as well as of an index's.
var CheckCached = checkCached
