package session

// What the session's calls use inside, for the tests of package session_test.
var (
	OpenCache    = (*Session).openCache
	ReadOnlyRoot = (*Session).readOnlyRoot
	TrustPolicy  = (*Session).trustPolicy

	UsedArchives   = usedArchives
	PruneCache     = pruneCache
	AutoPruneCache = autoPruneCache
	AutoEvery      = autoEvery
	OfferedPackage = offeredPackage
)
