package main

import (
	"cmp"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"pkg/config"
	"pkg/internal/shell"
	"pkg/internal/termtext"
	"pkg/internal/units"
	"pkg/pin"
	"pkg/publish"
	"pkg/repo"
	"pkg/runner"
	"pkg/session"
	"pkg/trust"
	"pkg/txn"
)

// A hintRule gives the advice for the errors it matches: those errors.Is finds err in, or
// is reports, or, with neither, those for which fn returns a hint.
type hintRule struct {
	err  error
	is   func(err error) bool
	hint string // with path, its %s is the path err is about (session.PathOf)
	path bool
	fn   func(err error, dirs []string) string
	// online says the commands the hint advises run online: they carry no --offline.
	online bool
}

// hints is pkg's advice, by the error it is about, the first rule that matches winning:
// libraries name no flag or command, so what to type lives here alone. A pkg command line
// to type is written 'pkg ...', in single quotes, with no global option but those its
// advice is about: hint adds the user's (cmdline.carry).
var hints = []hintRule{
	{fn: as(func(fe *session.FormatError) string {
		return fmt.Sprintf("nothing was changed; a newer pkg wrote this root's database (format %d): upgrade pkg to a release that reads it, or use the one that wrote it", fe.Format)
	})},
	{fn: func(err error, dirs []string) string {
		de := (*session.DamagedError)(nil)
		if !errors.As(err, &de) {
			return ""
		}
		root, verify := filepath.Dir(filepath.Dir(de.Path)), "verify"
		if len(dirs) == 0 || root != dirs[0] { // another root than the command's, as cache prune reads
			verify = "--root " + shell.Quote(root) + " verify"
		}
		return fmt.Sprintf("nothing was changed; 'pkg %s --repair' records the packages in %s again from their trees and the cache, deleting nothing and keeping the damaged file",
			verify, filepath.Join(root, "pkgs"))
	}},
	{fn: as(func(gr *goneRepairError) string {
		ge := (*session.GoneError)(nil)
		errors.As(gr, &ge)
		keys := make([]string, len(ge.Gone))
		for i, g := range ge.Gone {
			keys[i] = repo.InstanceKey(g.Kind, g.Package, g.Version)
		}
		if gr.Offline {
			return fmt.Sprintf("the database is not damaged: 'pkg --offline install --reinstall %s' puts back what is gone, from the cache (no repository is in effect)", strings.Join(keys, " "))
		}
		return fmt.Sprintf("the database is not damaged: 'pkg install --reinstall %s' puts back what is gone, from the cache or the repositories", strings.Join(keys, " "))
	})},
	{fn: asHint[*session.UnmatchedError]("move those trees out of pkgs/, repair again, then install their packages again (a repair offline, or without the repository that offers their versions, cannot fetch those to match them)")},
	{fn: as(func(ae *session.AmbiguousError) string {
		verb := ae.Op
		if verb == "reinstall" {
			verb = "install --reinstall"
		}
		return fmt.Sprintf("name one as NAME@VERSION: 'pkg %s %s'", verb, ae.Keys[len(ae.Keys)-1])
	})},
	{fn: as(func(ue *session.UnlinkedError) string {
		return fmt.Sprintf("remove or rename it, then run 'pkg install --reinstall %s'", ue.Package)
	})},
	{fn: as(func(ce *session.ConflictError) string {
		switch {
		case ce.Incoming:
			return fmt.Sprintf("install one of %s and %s, not both; nothing was changed", ce.Package, ce.Other)
		case ce.Command:
			// replaces does not let a command link take the place of a file in bin/.
			return fmt.Sprintf("nothing was changed; 'pkg remove %s' first if %s should take its place (a command link never takes the place of another package's own file in bin/, whatever replaces says)", ce.Other, ce.Package)
		}
		return fmt.Sprintf("nothing was changed; 'pkg remove %s' first if %s should take its place (a package takes over another's files only where its index entry says it replaces it)", ce.Other, ce.Package)
	})},
	{fn: as(linksHint)},
	{err: session.ErrNotLinked, hint: "if a pkg command is changing the root, verify again once it is done; if none is, one was cut short, and the next command that takes the root's lock, such as 'pkg verify' by a user who may change the root, puts the rest of the links in place first"},
	{is: session.ProxyFailed, hint: "the proxy HTTP_PROXY or HTTPS_PROXY names is refusing or unreachable: check those variables (and NO_PROXY)"},
	{fn: as(func(de *net.DNSError) string {
		if !de.IsNotFound {
			return ""
		}
		return fmt.Sprintf("DNS knows no host %s: check the host of the URL above for a typo (a repository's is in --repo, PKG_REPO or its configuration), or whether only another network (a VPN) knows it; --offline installs what the cache holds without it", de.Name)
	})},
	{fn: asHint[x509.UnknownAuthorityError]("if the server's certificate comes from your organisation's own authority, point SSL_CERT_FILE (or SSL_CERT_DIR) at that authority's certificate")},
	{fn: as(func(ne *session.NetrcError) string {
		if errors.Is(ne, session.ErrNetrcOpen) {
			return fmt.Sprintf("'chmod 600 %s' (and own it), or point NETRC at another file", shell.Quote(ne.File))
		}
		return "" // the error names the line
	})},
	{fn: as(func(ce *session.CleartextError) string {
		return fmt.Sprintf("use https for %s, or set cleartext-credentials = true in the repository's configuration (docs/config.md#credentials)", ce.Host)
	})},
	{err: config.ErrSecretOpen, hint: "'chmod 600' the file, or move the secret to a token-file or password-file (docs/config.md#credentials)"},
	{fn: as(downloadHint)},
	{fn: as(deniedHint)},
	{fn: func(err error, _ []string) string { // a refusal no *DeniedError says more of
		if errors.Is(err, session.ErrDenied) {
			return credentialsHint("the repository", "", "", nil)
		}
		return ""
	}},
	{err: session.ErrRealm, hint: "the registry's token challenge names a realm pkg does not ask: one in plain http for a registry spoken to over https, or on a loopback or link-local address (this machine, a cloud's metadata server) the registry is not on; check the registry's auth settings (docs/registry.md)"},
	{err: session.ErrNoExchange, hint: "put the root on a local filesystem such as XFS, btrfs, ext4 or tmpfs"},
	{err: session.ErrSplitRoot, hint: "pkg moves trees within the root, so its pkgs/ and .pkg/ must be on one filesystem; on overlayfs (a container's layers), mount with redirect_dir=on"},
	{fn: as(func(ke *session.KindError) string {
		return fmt.Sprintf("nothing was changed; 'pkg remove %s' first, then install the file again", repo.InstanceKey(ke.Kind, ke.Name, ke.Version))
	})},
	{fn: as(func(le *txn.LocalError) string {
		return fmt.Sprintf("put %s back as it was, or take a repository's version with 'pkg install REPO/NAME'", le.Origin)
	})},
	{is: npmGone, hint: "the registry no longer serves that tarball at the lock's resolved URL (unpublished, or the lock names a registry that is gone): run 'npm install --package-lock-only' in the project to resolve the lock again, then import the lock it writes"},
	{fn: as(goneSyncHint)},
	{err: session.ErrGone, hint: "the repository does not have the archive its index or the lockfile names: if it was republished, 'pkg lock' resolves a lockfile again; else tell its publisher"},
	{fn: asHint[*repo.NeededError]("remove those packages (or versions) first, or pass --force to leave their dependencies unmet")},
	{err: repo.ErrAlternatives, hint: "ask for one of the alternatives by its name: only a package's depends may offer a choice"},
	{fn: as(func(ce *repo.ConflictsError) string {
		return fmt.Sprintf("the index says %s and %s cannot be installed together: ask for one of them, or for versions of them that do not conflict", ce.Name, ce.Other)
	})},
	{fn: as(func(ue *repo.UnsignedError) string {
		return fmt.Sprintf("once the cause is fixed, run 'pkg repo sign %s'", ue.Dir)
	})},
	{fn: asHint[*repo.RepublishError]("or pass --replace to change the entry all the same")},
	{err: publish.ErrNoIndex, hint: "push the directory 'pkg repo add' writes, which holds index.json and the archives; a new repository's first package is added with 'pkg repo add REPO_DIR ARCHIVE'"},
	{err: publish.ErrArchiveChanged, hint: "the file changed since its entry was written, and the registry takes only the bytes the index records: restore it, or add it again with 'pkg repo add REPO_DIR FILE --replace', then push again: it sends only what the registry lacks"},
	{fn: as(pushTooLargeHint)},
	{fn: as(func(oe *publish.OlderError) string {
		refuse := fmt.Sprintf("refuses version %d as a rollback", oe.Version)
		if oe.Version == oe.Tagged {
			refuse = "refuses other bytes of that version"
		}
		return fmt.Sprintf("every client that accepted version %d %s: push the up-to-date repository directory, the one that signed version %d (this one may be a stale checkout); a publisher who really started over pushes with --force, and its clients run 'pkg repo forget'",
			oe.Tagged, refuse, oe.Tagged)
	})},
	{fn: as(func(re *publish.RepositoryError) string {
		return fmt.Sprintf("every client of %s refuses an index of %s in its place: check the reference (its NAMESPACE/REPO and TAG) and push to the tag of %s; a publisher who really renamed it pushes with --force, and its clients run 'pkg repo forget'",
			publish.RepositoryName(re.Tagged), publish.RepositoryName(re.Name), publish.RepositoryName(re.Name))
	})},
	{fn: asHint[*publish.SignatureError]("every client that accepted the signed index refuses an unsigned one in its place: sign this one ('pkg repo sign DIR --key KEYFILE') or push the directory that holds its index.json.sig; a publisher who really stopped signing pushes with --force, and its clients run 'pkg repo forget'")},
	{fn: asHint[*publish.ArchError]("pkg's platforms are Go's (linux-amd64, linux-arm64, ...): where the package runs on one of them, say so with --platform OS-ARCH")},
	{fn: asHint[*publish.TagError]("push to a tag of its own (oci://HOST/NAME:TAG), or pass --force to replace what the tag names")},
	{fn: asHint[*publish.UnnamedError]("pass --name and --version, or give the file a name such as tool-1.0.tar.gz")},
	{fn: asHint[*publish.NamelessError]("add that archive alone, with --name and --version, and the others together")},
	{err: publish.ErrNPMLockVersion, hint: "npm 7 and later write lockfileVersion 3: run 'npm install --package-lock-only' with one, then import the lock it writes"},
	{err: publish.ErrNotInNPMCache, hint: "without --offline, pkg downloads it from the lock's resolved URL; or fill npm's cache first ('npm ci'), or name another cache with --npm-cache DIR"},
	{err: publish.ErrNPMIntegrity, hint: "nothing was added: what the registry served is not the tarball the lock records (npm refuses it too, EINTEGRITY); check the registry or any proxy or mirror in between, and the lock's resolved URL"},
	{err: publish.ErrNPMLocal, hint: "pkg imports only packages published as tarballs: pack that package ('npm pack') and add it with 'pkg repo add REPO_DIR FILE', or publish it and lock again"},
	{fn: as(func(ce *publish.ControlError) string {
		flag := map[string]string{"Package": "--name", "Version": "--version", "Depends": "--depends", "Pre-Depends": "--depends",
			"Provides": "--provides", "Conflicts": "--conflicts", "Breaks": "--conflicts", "Replaces": "--replaces"}[ce.Field]
		return fmt.Sprintf("give what %s means to pkg with %s, which replaces the control file's %s", ce.Field, flag, ce.Field)
	})},
	{is: newerLockfile, hint: "a newer pkg wrote it: upgrade pkg to a release that reads that format ('pkg --version' names this one); locking again with this pkg would take the lockfile back for everyone"},
	{is: newerFormat, hint: "a newer pkg wrote it: upgrade pkg to a release that reads that format ('pkg --version' names this one)"},
	{err: repo.ErrUnnamed, hint: "name the repository: 'pkg repo sign DIR --key KEYFILE --name NAME' signs it under that name (for a new one, add its first package without --key, then sign it so), or use a directory whose name is a valid repository name"},
	{err: repo.ErrLockfile, hint: "pkg reads a lockfile only as pkg lock wrote it: restore it from version control, or make it again with 'pkg lock -o FILE NAME...'"},
	{err: pin.ErrLockUnverified, hint: "lock it again with the publisher's key ('pkg lock --trusted-key KEY', or trust it first with 'pkg trust add KEY')"},
	{err: pin.ErrLockUntrusted, hint: "trust one of those keys too ('pkg trust add KEY', or --trusted-key for one command), or lock again with a key trusted here"},
	{fn: as(outdatedHint)},
	{fn: as(func(ne *repo.NotOfferedError) string {
		s := "give a repository that still offers it with --repo URL"
		if ne.Cached {
			s = fmt.Sprintf("'pkg --offline install --reinstall %s' reinstalls it from the cache, as installed", repo.InstanceKey(ne.Kind, ne.Name, ne.Version))
		}
		if !errors.As(ne, new(*repo.MissingError)) { // they offer other versions
			s += fmt.Sprintf("; 'pkg upgrade %s' moves it to a version the repositories offer", ne.Name)
		}
		return s
	})},
	{fn: as(func(ue *session.UnknownDependenciesError) string {
		keys := make([]string, len(ue.Bare))
		for i, r := range ue.Bare {
			keys[i] = r.Key()
		}
		// Where no repository has its archive any more, removing it along is the way out.
		along := append(slices.Clone(ue.Remove), keys...)
		return reinstallUnknown(keys) + fmt.Sprintf("; where none has it, 'pkg remove %s' takes it along", quoteAll(along))
	})},
	{fn: as(func(re *txn.RepublishedError) string {
		return fmt.Sprintf("'pkg upgrade %s' takes the repository's", re.Name)
	})},
	{fn: as(func(pe *repo.PinGoneError) string {
		take := fmt.Sprintf("'pkg install %s' takes it from the repositories in use and asks for it from none", pe.Name)
		if pe.InUse {
			return take
		}
		return fmt.Sprintf("configure repository %s again, or give it for one command with --repo %s=URL; or %s", pe.Repo, pe.Repo, take)
	})},
	{fn: as(func(he *txn.HeldError) string {
		h := he.Held[0]
		if h.Detail.Package.Kind == repo.KindNPM { // its hold is that version's alone
			return fmt.Sprintf("an npm version asked for with a version or range is held to it; to move it, name it with a new one: 'pkg upgrade %s' holds it there, 'pkg install %s' takes the newest in its place unless a newer version of %s is installed (then 'pkg remove %s@%s' lets it go)",
				shell.Quote(h.Name+">="+h.Newest), h.Name, h.Name, h.Name, h.From)
		}
		return fmt.Sprintf("a package asked for with a version or constraint is held to it; to move it, name it with a new one: 'pkg upgrade %s' (or 'pkg install %s@%s') holds it there, 'pkg install %s' takes the newest and holds it no more",
			shell.Quote(h.Name+">="+h.Newest), h.Name, h.Newest, h.Name)
	})},
	{fn: as(func(de *session.DependentsError) string {
		if !de.Asked {
			if de.NamesAll() {
				return ""
			}
			return whyAllHint(de.Removed.Key())
		}
		names := make([]string, len(de.By))
		for i, r := range de.By {
			names[i] = shell.Quote(r.Name)
		}
		them := units.List(names, 0) + " need it"
		switch {
		case !de.NamesAll():
			them = fmt.Sprintf("%d packages need it (%s)", len(de.By), whyAllHint(de.Removed.Key()))
		case len(names) == 1:
			them = names[0] + " needs it"
		}
		return fmt.Sprintf("%s was asked for: it stays installed while %s, and autoremove keeps it after, as pkg has no command that makes a package asked for a dependency alone (as apt-mark auto does); once nothing needs it, 'pkg remove %s' takes it",
			shell.Quote(de.Removed.Name), them, shell.Quote(de.Removed.Key()))
	})},
	{fn: as(func(ne *session.NeededError) string {
		if ne.NamesAll() || len(ne.Remove) > 1 {
			return ""
		}
		return whyAllHint(ne.Remove[0])
	})},
	{fn: as(func(ce *runner.CommandError) string { // one with commands is run's usage error (run.go)
		name := shell.Quote(ce.Package)
		return fmt.Sprintf("%s declares no commands (of a .deb, its executables in usr/bin, bin, usr/sbin and sbin), and --cmd takes a command's name, not a path: to run one of its files, 'pkg install %s', then run it by its path in the root ('pkg files %s' lists them)",
			name, name, name)
	})},
	{fn: as(func(be *repo.BelowError) string {
		beside := "the one installed"
		if len(be.Installed) > 1 {
			beside = "those installed"
		}
		return fmt.Sprintf("'pkg install %s' installs that version beside %s", shell.Quote(be.Requirement.String()), beside)
	})},
	{fn: as(func(ne *session.RepoNameError) string {
		if ne.File != "" {
			return fmt.Sprintf("a signed repository has the one name its index gives it: name it %s in %s, or leave the name out", ne.Name, ne.File)
		}
		return fmt.Sprintf("call it %s ('pkg repo list' shows the names in effect)", ne.Name)
	})},
	{fn: as(func(le *config.LocationError) string {
		other, loc := termtext.Printable(le.Other), termtext.Printable(le.Location)
		if !le.Credential {
			return fmt.Sprintf("keep [repo.%s] alone for %s, with the keys and mirrors of both", other, loc)
		}
		host := le.Location
		if u, err := url.Parse(le.Location); err == nil && u.Hostname() != "" {
			host = u.Hostname()
		}
		return fmt.Sprintf("keep [repo.%s] alone for %s, with the keys of both and no user information in its urls, and give it the credential as token-file, or username with password-file, or a machine %s entry in ~/.netrc",
			other, loc, termtext.Printable(host))
	})},
	{fn: as(func(ce *config.ConflictError) string {
		loc := shell.Quote(termtext.WithoutCredentials(ce.Given.URLs[0]))
		return fmt.Sprintf("a location is one repository, known by one name: --repo %s (or PKG_REPO=%s) uses it as %s; to call a repository %s, give it a location no other configured repository has",
			loc, loc, ce.Configured.Name, ce.Given.Name)
	})},
	{is: offlineRollback, hint: "offline, the index is the cache's copy, older than the one the lockfile was made from: run once online, without --offline (and PKG_OFFLINE unset), or restore a cache saved after the lockfile was made"},
	{err: pin.ErrLockRollback, hint: "a mirror or proxy is serving an old index: try again later, or another mirror (if the publisher really started over, remove the lockfile and lock again)"},
	{err: pin.ErrLockNotVerified, hint: "pass the publisher's key with --trusted-key (to lock against an unsigned repository instead, write another lockfile with -o)"},
	{fn: as(func(oe *offlineSyncError) string {
		if oe.Run != "" {
			return fmt.Sprintf("run 'pkg run --lock %s %s' once online, without --offline (and PKG_OFFLINE unset): it fetches the archives the lockfile pins from its repositories into the cache, where runs offline find them", shell.Quote(oe.Path), shell.Quote(oe.Run))
		}
		return fmt.Sprintf("run 'pkg sync -f %s' online, without --offline (and PKG_OFFLINE unset): it fetches the archives the lockfile pins from its repositories (restore one moved away, or name where it is now with --repo NAME=LOCATION)", shell.Quote(oe.Path))
	}), online: true},
	{fn: as(sizeHint)},
	{fn: as(func(se *session.SizeError) string { return sizeHint(&sizeError{error: se}) })}, // of a command that changes no root
	{fn: asHint[*noRepoNotCachedError]("no repository is in effect to fetch them from: fetch them online from one ('pkg --repo URL fetch NAME...' fills the cache; or configure it, docs/config.md), or run with it, without --offline (and PKG_OFFLINE unset)"), online: true},
	{fn: asHint[*txn.NotCachedError]("fetch them while online ('pkg fetch NAME...' fills the cache), or run without --offline (and PKG_OFFLINE unset)"), online: true},
	{err: session.ErrNoRoot, hint: "check --root (PKG_ROOT): commands about what is installed need a root something was installed in"},
	{err: session.ErrCutShort, hint: "'pkg verify' undoes it now, as the next install does first"},
	{err: session.ErrLocked, hint: "run the command again once that one is done, or let it wait longer with --lock-timeout (0 waits for as long as it takes)"},
	{err: session.ErrNotCache, hint: "pkg deletes files in its cache, so it makes one only in a new or empty directory and uses no other: point --cache (PKG_CACHE) at a new or empty directory"},
	{fn: asHint[*session.ReadOnlyError]("or point --cache (PKG_CACHE) at a directory you can write")},
	{err: session.ErrReadOnly, hint: "remount it read-write to change it, or choose another --root; list, info, files and verify work as they are"},
	{fn: as(mirrorDirHint)},
	{err: syscall.ENOSPC, path: true, hint: "the filesystem holding %s is full (of data or of inodes): free space there, or choose another --root or --cache"},
	{err: syscall.EDQUOT, path: true, hint: "your disk quota on the filesystem holding %s is used up: free space there, or choose another --root or --cache"},
	{err: syscall.EROFS, path: true, hint: "%s is on a read-only filesystem: choose another --root or --cache"},
	{fn: func(err error, dirs []string) string {
		if session.PathDenied(err, dirs...) {
			return "pkg reads and writes --root (PKG_ROOT) and --cache (PKG_CACHE), by default under your home: a root or cache of another user's needs directories of your own"
		}
		return ""
	}},
	{fn: as(func(pe *trust.PinnedError) string {
		if pe.Root != "" || !pe.PinnedKeySigned() {
			return ""
		}
		return "trust that key for the repository ('pkg trust add NAME=KEY', or --trusted-key KEY for one command) so that pkg can check the index's signature; a signature it then refuses means the index was changed after it was signed"
	})},
	{is: session.PinRefused, hint: pinHint},
	{fn: asHint[*pushUnreachableError]("check the network, and that the registry named above is up, then push again: it sends only the blobs the registry does not have yet")},
	{err: session.ErrUnreachable, hint: "check the network, and that the server named above is up; --offline installs what the cache holds without it"},
	{fn: asHint[*noRepoDamagedError]("no repository is in effect to fetch it from: fetch the package again online from one ('pkg --repo URL fetch NAME...' puts it back in the cache; or configure it, docs/config.md), or run with it, without --offline (and PKG_OFFLINE unset)"), online: true},
	{is: damagedOffline, hint: "fetch the package again while online ('pkg fetch NAME...' puts it back in the cache), or run without --offline (and PKG_OFFLINE unset)", online: true},
	{fn: asHint[*session.MirrorOfflineError]("run 'pkg mirror' online, without --offline (and PKG_OFFLINE unset): offline it mirrors only the archives the directory has already, and writes no index while it lacks one"), online: true},
	{err: session.ErrOffline, hint: "run pkg once without --offline (and PKG_OFFLINE unset), online, to save the repository's index in the cache"},
	{fn: as(lockRepoHint)},
	{fn: as(func(ce *session.ConfiguredError) string {
		if ce.Lock != "" {
			return fmt.Sprintf("the repository is no longer where %s records it: name where it is now, or a copy of it, with 'pkg --repo %s=LOCATION lock -o %s'",
				shell.Quote(ce.Lock), ce.Repo, shell.Quote(ce.Lock))
		}
		return fmt.Sprintf("check the urls of [repo.%s] in %s: the first names the directory or URL that holds index.json, or the registry reference (oci://HOST/NAMESPACE/REPO:TAG) it was pushed to", ce.Repo, ce.File)
	})},
	{err: session.ErrNoRepository, hint: "check --repo (PKG_REPO): it names the directory or URL that holds index.json, or the registry reference (oci://HOST/NAMESPACE/REPO:TAG) it was pushed to"},
	{err: pin.ErrNotVerified, hint: pinHint},
	{err: trust.ErrUsedUnsigned, hint: "--require-signed refuses such repositories; once the publisher signs it, trust their key with 'pkg trust add KEY'"},
	{err: trust.ErrUsedUntrusted, hint: "trust the publisher's key with 'pkg trust add KEY' (or --trusted-key for one command), and pkg then requires it"},
	{fn: asHint[*trust.LineError]("fix or remove that line of the file: a line holds keys, [REPO=]pkg-ed25519:<base64>, and # starts a comment")},
	{err: trust.ErrUnsigned, hint: "ask the publisher to sign the repository (pkg repo sign); if it is signed, something on the way removed its index.json.sig"},
	{err: trust.ErrUntrusted, hint: "get the publisher's public key (pkg-ed25519:...) from them and trust it with 'pkg trust add KEY' (or --trusted-key for one command); if they changed keys, trust the new one"},
	{err: trust.ErrBadSignature, hint: "the index or its signature was altered after signing, or a cache on the way holds a stale one: try again, or another mirror, and tell the publisher if it persists"},
	{err: trust.ErrMalformed, hint: "ask the publisher to sign the repository again with pkg repo sign"},
	{err: trust.ErrWrongName, hint: "check --repo: this location serves another repository's index than before (if the publisher really renamed it, run 'pkg repo forget')"},
	{err: trust.ErrNotBound, hint: "the key is trusted only for the repository its REPO= binding names: if the publisher renamed the repository, trust the key for the new name ('pkg trust add NAME=KEY', or in --trusted-key or PKG_TRUSTED_KEYS)"},
	{err: session.ErrDigest, hint: "the registry, or a proxy in front of it, served the repository's index, its signature or its manifest altered (not the bytes of their digest): try again, or another mirror, and tell the registry's operator if it persists"},
	{err: session.ErrMismatch, hint: "the archive served is not the one the index (or lockfile) names: a mirror or proxy may hold a stale or altered copy; try again, or another mirror, and tell the publisher if it persists"},
	{err: trust.ErrExpired, hint: "the publisher must sign the index again (pkg repo sign) before it expires, and a mirror serving an old copy looks the same; --offline installs from the last verified copy"},
	{err: trust.ErrRollback, hint: "a mirror or proxy is serving an old index: try again later, or another mirror (if the publisher really started over, run 'pkg --repo LOCATION repo forget' for the location the newer version came from)"},
	{err: trust.ErrReused, hint: "the index changed without a new version, so the publisher or their key signed two different indexes: tell the publisher (if they really started over, run 'pkg repo forget')"},
	{fn: as(func(pe *repo.LockPlatformError) string {
		file := cmp.Or(pe.Path, "FILE")
		return fmt.Sprintf("lock it for %s too, keeping its platforms: 'pkg lock -o %s --platform %s' locks the requirements it records again, for each",
			pe.Platform, shell.Quote(file), strings.Join(append(slices.Clone(pe.Platforms), pe.Platform), ","))
	})},
	{fn: as(func(se *repo.InputsError) string {
		file := shell.Quote(se.Path)
		with := se.With()
		if repo.Inputs(with) == repo.Inputs(se.Locks) {
			return fmt.Sprintf("'pkg sync -f %s' with no names syncs what it locks", file)
		}
		args := []string{"pkg", "lock", "-o", file}
		for _, r := range with {
			args = append(args, shell.Quote(r.String()))
		}
		return fmt.Sprintf("'%s' locks the requirements it records with those given, then 'pkg sync -f %s' syncs them; 'pkg sync -f %s' alone syncs what it locks now",
			strings.Join(args, " "), file, file)
	})},
}

// as makes a hint rule's fn of hint, for the errors errors.As finds a T in.
func as[T error](hint func(T) string) func(error, []string) string {
	return func(err error, _ []string) string {
		var t T
		if errors.As(err, &t) {
			return hint(t)
		}
		return ""
	}
}

// asHint is the fn of a hint rule giving hint for the errors errors.As finds a T in.
func asHint[T error](hint string) func(error, []string) string {
	return as(func(T) string { return hint })
}

// whyAllHint says how to see every installed package that needs the package key, of which
// an error named a few.
func whyAllHint(key string) string {
	return fmt.Sprintf("'pkg why %s' names every package that needs it, and how each one asked for does", shell.Quote(key))
}

// hint returns what to do about err, or "", its pkg command lines carrying what they
// take of the user's (l, nil for none).
func hint(err error, l *cmdline) string {
	var dirs []string
	if l != nil {
		dirs = l.dirs
	}
	for _, h := range hints {
		switch {
		case h.err != nil && errors.Is(err, h.err) || h.is != nil && h.is(err):
			if h.path {
				return l.carry(fmt.Sprintf(h.hint, cmp.Or(session.PathOf(err), "the root or the cache")), h.online)
			}
			return l.carry(h.hint, h.online)
		case h.fn != nil:
			if s := h.fn(err, dirs); s != "" {
				return l.carry(s, h.online)
			}
		}
	}
	return ""
}

// sizeHint is the advice for an archive whose size its lockfile or its index declares
// wrong, saying the root was not changed where the command was to change one.
func sizeHint(se *sizeError) string {
	if se.Lock != "" {
		kept := ""
		if se.Root {
			kept = ", and the root was not changed"
		}
		return fmt.Sprintf("%s declares that size, as the repository's index did when it was locked: the lockfile is what is wrong, not the archive%s; lock it again with 'pkg lock -o %s' once the index declares the archive's size (tell its publisher if it does not)",
			se.Lock, kept, shell.Quote(se.Lock))
	}
	hint := "the repository's index declares that size: tell its publisher (the publisher of a local repository corrects its entry by adding the archive again: 'pkg repo add REPO_DIR FILE --replace')"
	if se.Root {
		hint += "; the root was not changed"
	}
	return hint
}

// linksHint says what to do about links a committed change could not make. Those of the
// prefix, which the roll-forward of step 7b makes, are made by the start of the next
// command that takes the root's lock: verify, which changes nothing else, finishes them in
// one run (on a full filesystem, once space is freed) and then checks the packages. Open
// joins the prefix's error before bin/'s, so errors.As finds it first.
func linksHint(le *session.LinksError) string {
	const finish = "run 'pkg verify': it puts the rest of the links in place first, then checks the packages (nothing needs installing again)"
	switch full := errors.Is(le, syscall.ENOSPC) || errors.Is(le, syscall.EDQUOT); {
	case le.Prefix && full:
		return fmt.Sprintf("free space on the filesystem holding %s, then %s", le.Dir, finish)
	case le.Prefix:
		return "once what stopped it is fixed, " + finish
	case full:
		return "" // the full filesystem's hint says what to do
	}
	return fmt.Sprintf("the packages are as the command left them; once %s can be changed, 'pkg verify' names the links still wrong", le.Dir)
}

// lockRepoHint says where to sync a lockfile's packages from when the location it records
// for their repository serves none: another, by --repo; a location given otherwise is
// checked where it was given (ErrNoRepository's hint, for --repo).
func lockRepoHint(le *session.LockRepoError) string {
	switch {
	case le.Recorded && le.Run != "":
		return fmt.Sprintf("the repository is no longer where %s records it: name where it is now, or a copy of it, with 'pkg --repo %s=LOCATION run --lock %s %s' (the archives must match the lockfile's sha256)",
			shell.Quote(le.Lock), le.Repo, shell.Quote(le.Lock), shell.Quote(le.Run))
	case le.Recorded:
		return fmt.Sprintf("the repository is no longer where %s records it: name where it is now, or a copy of it, with 'pkg --repo %s=LOCATION sync -f %s' (the archives must match the lockfile's sha256)",
			shell.Quote(le.Lock), le.Repo, shell.Quote(le.Lock))
	case le.From != "--repo" && le.From != "PKG_REPO":
		return fmt.Sprintf("the repository configured as %s in %s serves the packages %s records from %s: check its urls there", le.Repo, shell.Quote(le.From), shell.Quote(le.Lock), le.Repo)
	}
	return ""
}

// pinHint says what to do about an index refused for want of a trusted key's signature,
// of a repository pkg pinned (session.PinRefused).
const pinHint = "once pkg accepted a signed index of a repository, it takes only indexes a key trusted for it verifies; " +
	"if the publisher changed keys, trust the new one with 'pkg trust add KEY' ('pkg trust list' shows the pins); " +
	"if the repository really stopped signing, 'pkg repo forget' unpins it"

// deniedHint says what to do about a repository that refused a request, naming it: check
// the credential it was given, naming where that came from, or give one, naming the
// variables pkg looks in for this repository, its configuration's entry and the netrc file.
func deniedHint(de *session.DeniedError) string {
	repo := "the repository"
	if de.Repo != "" {
		repo = fmt.Sprintf("the repository %s (%s)", termtext.Printable(de.Repo), termtext.Printable(de.Location))
	}
	switch {
	case de.Credential != "":
		return fmt.Sprintf("%s refused the credential of %s: check that it is current and may read this repository, or, to push, write to it (docs/config.md#credentials)", repo, de.Credential)
	case de.URL:
		return repo + " refused the credential in the URL (its user information): check that it is current and may read this repository, or, to push, write to it (docs/config.md#credentials)"
	}
	return credentialsHint(repo, de.Repo, de.Location, de.Vars)
}

// credentialsHint says where the credentials of repo, named name at location ("" where
// not known), go: the variables of vars (their prefixes, config.Repo.CredentialVars), or
// where they are not known PKG_REPO_<NAME>_'s; its entry in the user's configuration file;
// the netrc file.
func credentialsHint(repo, name, location string, vars []string) string {
	p, also := "PKG_REPO_<NAME>_", ""
	if len(vars) > 0 {
		p = vars[0]
	}
	if len(vars) > 1 {
		also = " (those of " + strings.Join(vars[1:], "*, ") + "* count too)"
	}
	entry := "its [repo.NAME] entry"
	if name != "" {
		entry = fmt.Sprintf("[repo.%s] with urls = [\"%s\"]", termtext.Printable(name), termtext.Printable(location))
	}
	file := "your configuration"
	if files := config.Files(""); len(files) > 1 {
		file = termtext.Printable(files[1])
	}
	netrc := termtext.Printable(cmp.Or(config.NetrcFile(), "~/.netrc"))
	return fmt.Sprintf("if %s needs credentials, set %sTOKEN (or %sUSERNAME and %sPASSWORD)%s, give %s in %s a token-file (or a username and a password-file), or give its host a machine entry in %s (docs/config.md#credentials); pkg records them nowhere",
		repo, p, p, p, also, entry, file, netrc)
}

// downloadHint says what to do about an archive repo add could not download from the URL
// it was given: check that URL, which no index or lockfile named.
func downloadHint(de *publish.DownloadError) string {
	var refused *session.DeniedError
	switch {
	case errors.Is(de, session.ErrGone):
		return "the server has no file at that URL: check it (repo add reads the archive from the URL it is published at, and records that URL)"
	case errors.As(de, &refused) && refused.URL:
		return "the server refused the credential in the URL (its user information): check that it is current and may download the archive (docs/config.md#credentials)"
	case errors.Is(de, session.ErrDenied):
		return "the server refused the download: give the URL of an archive anyone may download, or download it yourself and add the file"
	case errors.Is(de, session.ErrUnreachable):
		return "check the network, and the URL's host"
	}
	return ""
}

// pushTooLargeHint says what to do about a blob's upload whose request body the registry,
// or a proxy in front of it, refused as too large (publish.ErrTooLarge): that body was the
// blob, or a chunk of it, whichever is smaller.
func pushTooLargeHint(pe *publish.PushError) string {
	if !errors.Is(pe, publish.ErrTooLarge) {
		return ""
	}
	return fmt.Sprintf("the registry, or a proxy in front of it, refused a request's body of %s as too large (a blob over --chunk-size, %s here, goes in chunks of that size): push again with a smaller --chunk-size, under that limit (512KiB passes nginx's default client_max_body_size, 1 MiB)",
		units.Size(min(pe.Size, pe.Chunk)), units.Size(pe.Chunk))
}

// outdatedHint says how to lock again a lockfile a frozen sync refused: as it records its
// requirements, or, where the repositories no longer meet some of them (pkg lock would
// refuse those too), naming the packages, those requirements by their names alone.
func outdatedHint(oe *txn.OutdatedError) string {
	if len(oe.Unresolved) == 0 {
		return fmt.Sprintf("run 'pkg lock -o %s' to update it", shell.Quote(oe.Path))
	}
	args := []string{"pkg", "lock", "-o", shell.Quote(oe.Path)}
	for _, r := range oe.Requires {
		if slices.ContainsFunc(oe.Unresolved, func(u repo.Requirement) bool { return u.String() == r.String() }) {
			r = repo.Requirement{Repo: r.Repo, Name: r.Name}
		}
		args = append(args, shell.Quote(r.String()))
	}
	return fmt.Sprintf("the repositories no longer meet %s, which %s records (so 'pkg lock -o %s' refuses it too): name the packages to lock, %s by name alone: '%s'",
		repo.JoinRequirements(oe.Unresolved), shell.Quote(oe.Path), shell.Quote(oe.Path), repo.JoinRequirements(oe.Unresolved), strings.Join(args, " "))
}

// goneSyncHint says what to do about an archive not where a sync's or a run's lockfile
// records it: name where the repository is now, or lock again where the publisher removed
// it.
func goneSyncHint(ge *goneSyncError) string {
	repo := "LOCATION"
	if ge.Several {
		repo = "NAME=LOCATION" // NAME the lockfile's, of the repository that moved
	}
	verb, again := "sync", "sync -f "+shell.Quote(ge.Path)
	if ge.Run != "" {
		verb, again = "run", "run --lock "+shell.Quote(ge.Path)+" "+shell.Quote(ge.Run)
	}
	return fmt.Sprintf("the archive is not where %s records it: if its repository moved, %s from where it is now with 'pkg --repo %s %s' (the archives must match the lockfile's sha256); if its publisher removed it, 'pkg lock -o %s' locks the requirements again",
		shell.Quote(ge.Path), verb, repo, again, shell.Quote(ge.Path))
}

// newerFormat reports whether err refuses an index or a lockfile of a format above the one
// this pkg reads, which a newer pkg wrote; one below it is damaged.
func newerFormat(err error) bool {
	var fe *repo.FormatError
	return errors.As(err, &fe) && fe.Format > fe.Newest
}

// newerLockfile reports whether err refuses a lockfile a newer pkg wrote.
func newerLockfile(err error) bool { return newerFormat(err) && errors.Is(err, repo.ErrLockfile) }

// offlineRollback reports whether err refuses, offline, the cache's copy of an index as
// older than the one a lockfile was made from.
func offlineRollback(err error) bool {
	return errors.Is(err, pin.ErrLockRollback) && errors.Is(err, session.ErrOffline)
}

// damagedOffline reports whether err is an offline command's refusal to fetch again a
// cached archive found damaged: the index is cached, the archive is what is missing.
func damagedOffline(err error) bool {
	return errors.Is(err, session.ErrCacheDamaged) && errors.Is(err, session.ErrOffline)
}

// npmGone reports whether err is a lock import's download of a tarball the registry does
// not have (404, 410): the lock's to resolve again, not pkg's.
func npmGone(err error) bool {
	var le *publish.NPMLockError
	return errors.As(err, &le) && errors.Is(err, session.ErrGone)
}

// noRepoNotCachedError is an offline refusal of archives the cache lacks
// (*txn.NotCachedError) where no repository is in effect to fetch them from.
type noRepoNotCachedError struct{ error }

func (e *noRepoNotCachedError) Unwrap() error { return e.error }

// noRepoDamagedError is an offline refusal of a cached archive found damaged
// (damagedOffline) where no repository is in effect to fetch it again from.
type noRepoDamagedError struct{ error }

func (e *noRepoDamagedError) Unwrap() error { return e.error }

// notCachedNoRepo returns err as a *noRepoNotCachedError where it holds a
// *txn.NotCachedError, and as a *noRepoDamagedError where damagedOffline holds, when s has
// no repository in effect, or cannot say which; any other err as it is.
func notCachedNoRepo(s *session.Session, err error) error {
	notCached, damaged := errors.As(err, new(*txn.NotCachedError)), damagedOffline(err)
	if !notCached && !damaged {
		return err
	}
	if rs, rerr := s.Repositories(); rerr == nil && len(rs) > 0 {
		return err
	}
	if damaged {
		return &noRepoDamagedError{err}
	}
	return &noRepoNotCachedError{err}
}
