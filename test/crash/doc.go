// Package crash runs the real pkg binary on real filesystems and interrupts it: kill -9 at
// random moments of install, upgrade, downgrade and remove, a filesystem that runs out of
// space, and several processes sharing one root and one cache. After each interruption it
// checks the invariants of the commit protocol (DESIGN.md). It has no code outside its tests.
package crash
