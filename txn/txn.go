// Package txn plans and carries out a change to an install root: it resolves what a command
// asks for against the repository's index and the root's records into a Plan, which lists
// what the change downloads, installs, upgrades, reinstalls and removes and why, and applies
// it: fetching the archives at once into the cache, staging each as it lands, and committing
// them together, or discarding them all on the first error, in the root the plan holds
// (Target), which Apply gives up at the end. It also accepts the index a
// change comes from into the root's records, which bound later indexes (trust.go), explains
// what an offline change misses in the cache (offline.go), and finds what a cache prune may
// remove across the roots that share the cache (prune.go).
//
// It prints nothing: an Observer hears of the downloads, and the caller words the Outcome.
package txn
