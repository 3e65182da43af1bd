package session

import "runtime"

// DefaultJobs is how many packages to fetch at once unless told: one download keeps most
// of two cores busy (decompressing, and hashing while aligning), so more only help while
// downloads wait for the network; past four they mostly share one server.
func DefaultJobs() int { return min(4, 2*runtime.GOMAXPROCS(0)) }
