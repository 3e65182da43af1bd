// Package registry runs the pkg binary against a real OCI registry: Debian's
// docker-registry (distribution 2.8) started by the test on 127.0.0.1 with token auth,
// the token server (ES256 tokens carrying their certificate, x5c) in the test, and a root
// and cache on loop-mounted XFS. It pushes a signed repository, installs from it, resumes a
// blob cut short, installs again offline, locks and syncs, and checks the refusals of
// issue #34. It has no code outside its tests.
package registry
