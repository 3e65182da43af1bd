package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pkg/internal/durable"
	"pkg/internal/regfile"
)

const indexName = "index.json"

// Add copies the archive at archivePath into dir under a name of its own and records p
// for it in dir's index.json, creating the index if absent and replacing an entry of the
// same name and version. It sets p's Archive, Size and SHA256, takes the rest as given
// (the caller measures InstalledSize and Files) but for its bin paths, which it cleans
// (Command.Clean), and returns the entry as written.
//
// The archive is named NAME-VERSION.EXT, EXT that of archivePath (archiveExt), whatever
// its publisher called it: two data.tar.xz, or two builds of foo.deb, never clash. No file
// of dir is written over with other bytes, as mirrors and caches may hold it: the archive
// of the entry replaced keeps its name where it holds the same bytes (the version added
// again from a file named otherwise); other bytes take a name numbered past its own,
// NAME-VERSION-2.EXT, or -3, and so on (archiveFor), and, once the index no longer names
// it, the archive replaced is deleted, unless another entry names it. Nothing records a
// name deleted: a version removed and added again starts from NAME-VERSION.EXT.
//
// Each file is written atomically (a temporary file in dir, fsync, rename, fsync of dir),
// the archive first, so the index never names a missing archive, and the archive replaced
// is deleted after the index, so that an add cut short leaves at worst a file the index
// does not name; a deletion that fails then is no error, the archive being Left (Dropped).
// The index lists packages by name, then version, as indented JSON with a trailing
// newline. Adds, removes and signs of one directory take turns (a flock of dir), Add
// waiting for its turn until ctx is done. Unless replace, it refuses, holding that turn, an
// entry of p's name, version and platform with another archive or other metadata
// (*RepublishError), so that of two adds of one version at once, one fails rather than
// changes what the other published. Given a signer, it signs the index it writes as Sign
// does. An add that leaves the index as it was (unchanged) writes nothing. It returns
// what it did: the entry and the index's Meta as written, the entry replaced, and what
// became of its archive.
func Add(ctx context.Context, dir, archivePath string, p Package, replace bool, s *Signer) (*Added, error) {
	res, err := add(ctx, dir, archivePath, "", p, replace, s)
	if re := (*RepublishError)(nil); errors.As(err, &re) {
		return nil, re
	}
	if err != nil {
		return nil, fmt.Errorf("add %s to %s: %w", archivePath, dir, err)
	}
	return res, nil
}

// Added is what Add did.
type Added struct {
	Package  Package   // the entry as written
	Meta     Meta      // the index's, as written (as it was, where nothing was written)
	Index    []Package // the index's entries, as written
	Written  bool      // index.json was written, and signed given a signer: not where it was unchanged
	Created  bool      // dir had no index.json
	Replaced []Package // the entry of the same name, version and platform whose place it took, if any (itself, added again, included)
	Dropped            // the archive of Replaced, where no entry names it now
}

// add adds p to dir's index, its archive at archivePath copied into dir, or, when
// remote is not "", recorded as the URL remote that archivePath is a download of;
// unless replace, a republish is refused (checkRepublish).
func add(ctx context.Context, dir, archivePath, remote string, p Package, replace bool, s *Signer) (*Added, error) {
	p, err := prepare(archivePath, remote, p)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, err := place(dir, archivePath, remote != "", p, replace, s)
	if re := (*RepublishError)(nil); err != nil && !errors.As(err, &re) {
		return nil, fmt.Errorf("package %s: %w", p.id(), err)
	}
	return res, err
}

// prepare returns p as add records it, its archive at archivePath or the URL remote,
// checked as an index's entry is.
func prepare(archivePath, remote string, p Package) (Package, error) {
	if !validName(p.Name) {
		return p, badName(p.Name)
	}
	p.Archive = archiveStem(p) + archiveExt(archivePath) // checked as the index's are
	if remote != "" {
		if !IsURL(remote) {
			return p, &archiveError{remote, fmt.Sprintf("archive URL %s is not an http(s) URL", remote)}
		}
		p.Archive = remote
	}
	p.Bin = slices.Clone(p.Bin)
	for i, b := range p.Bin {
		p.Bin[i] = b.Clean()
	}
	normalize(&p)
	return p, checkMeta(&p)
}

// place reads dir's index, refuses a republish of p unless replace, copies the archive in
// unless it is remote, sets p's size and sha256 and writes the index with p, signed by s
// if not nil, unless that leaves it unchanged, then deletes the archive of the entry p
// replaced that no entry names now.
func place(dir, archivePath string, remote bool, p Package, replace bool, s *Signer) (*Added, error) {
	ix, created, err := readIndex(filepath.Join(dir, indexName))
	if err != nil {
		return nil, err
	}
	if !replace {
		if err := checkRepublish(dir, archivePath, ix, p); err != nil {
			return nil, err
		}
	}
	had, meta := slices.Clone(ix.Packages), ix.Meta
	if err := stamp(dir, ix, s); err != nil {
		return nil, err
	}
	if remote {
		p.Size, p.SHA256, err = HashFile(archivePath)
	} else {
		p.Archive, p.Size, p.SHA256, err = archiveFor(dir, archivePath, archiveExt(archivePath), p, ix)
	}
	if err != nil {
		return nil, err
	}
	if err := checkNumbers(&p); err != nil {
		return nil, err
	}
	res := &Added{Package: p, Meta: meta, Created: created, Replaced: ix.put(p), Index: ix.Packages}
	if unchanged(dir, had, meta, ix, s) {
		return res, nil
	}
	if err := writeIndex(dir, ix, s); err != nil {
		return nil, err
	}
	res.Meta, res.Written = ix.Meta, true
	res.Dropped = dropArchives(dir, res.Replaced, ix.Packages)
	return res, nil
}

// ArchiveEndings are the endings of the names of the archives pkg reads (fetch sniffs the
// format from the bytes; these only tell a file's name from a package's).
var ArchiveEndings = []string{".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.xz", ".txz",
	".tar.bz2", ".tbz2", ".tbz", ".deb", ".zip"}

// archiveExts are the endings archiveExt keeps whole.
var archiveExts = []string{".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2"}

// archiveExt is the ending of path's base name that Add keeps in its archive's name:
// ".tar.zst", ".deb", ".zip"; what follows the last dot for others; none without a dot.
// archiveStem is NAME-VERSION, an epoch's ":" written "_": a relative URL whose first
// segment has a ":" reads as a scheme ("hello-1:2.0.deb").
// An entry for one platform has it last: NAME-VERSION-PLATFORM, so that the builds of one
// version for several platforms never clash.
func archiveStem(p Package) string {
	stem := FileName(p.Name) + "-" + strings.ReplaceAll(p.Version, ":", "_")
	if p.Platform != "" {
		stem += "-" + p.Platform
	}
	return stem
}

func archiveExt(path string) string {
	base := filepath.Base(path)
	for _, e := range archiveExts {
		if strings.HasSuffix(base, e) {
			return e
		}
	}
	return filepath.Ext(base)
}

// maxArchiveNames bounds the names placeArchive tries for one package version.
const maxArchiveNames = 1000

// placeArchive puts a copy of src in dir as the first name, from the first-th on, of
// stem+ext, stem-2+ext, stem-3+ext... that is free or holds the same bytes. It returns the
// name and the archive's size and sha256.
func placeArchive(dir, src, stem, ext string, first int) (string, int64, string, error) {
	for n := first; n < first+maxArchiveNames; n++ {
		name := stem + ext
		if n > 1 {
			name = fmt.Sprintf("%s-%d%s", stem, n, ext)
		}
		exists, same, err := sameContents(src, filepath.Join(dir, name))
		switch {
		case err != nil:
			return "", 0, "", err
		case same:
			size, sum, err := HashFile(src)
			return name, size, sum, err
		case !exists:
			size, sum, err := copyArchive(dir, src, name)
			return name, size, sum, err
		}
	}
	return "", 0, "", fmt.Errorf("%s: %d archives of other bytes named %s-N%s already", dir, maxArchiveNames, stem, ext)
}

// archiveFor places the archive at src in dir for p, its name ending in ext. Where the
// entry of ix p replaces names a file of the same bytes, that is its name: the version
// added again from a file named otherwise keeps the name mirrors, caches and lockfiles
// know its archive by. Otherwise placeArchive places it from the number after that
// entry's on, so that, while the version has an entry, the replaced archive's name,
// deleted once the index is written, and those before it never name other bytes.
func archiveFor(dir, src, ext string, p Package, ix *Index) (string, int64, string, error) {
	stem, first := archiveStem(p), 1
	if i := slices.IndexFunc(ix.Packages, p.SameKey); i >= 0 && keptArchive(ix.Packages[i].Archive) {
		was := ix.Packages[i].Archive
		switch _, same, err := sameContents(src, filepath.Join(dir, filepath.FromSlash(was))); {
		case err != nil:
			return "", 0, "", err
		case same:
			size, sum, err := HashFile(src)
			return was, size, sum, err
		}
		first = archiveNumber(was, stem) + 1
	}
	return placeArchive(dir, src, stem, ext, first)
}

// archiveNumber is the N of the archive name a that placeArchive gave, of stem: 1 for
// stem+EXT, N for stem-N+EXT; 0 for a name it did not give.
func archiveNumber(a, stem string) int {
	rest, ok := strings.CutPrefix(a, stem)
	switch {
	case !ok:
		return 0
	case rest == "" || rest[0] == '.':
		return 1
	case rest[0] != '-':
		return 0
	}
	digits, _, _ := strings.Cut(rest[1:], ".")
	if n, err := strconv.Atoi(digits); err == nil && n >= 2 && n < math.MaxInt-maxArchiveNames {
		return n
	}
	return 0
}

// copyArchive copies src to dir/name and returns its size and sha256.
func copyArchive(dir, src, name string) (int64, string, error) {
	var size int64
	h := sha256.New()
	err := writeFile(dir, name, func(w io.Writer) error {
		f, err := regfile.Open(src, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		size, err = io.Copy(io.MultiWriter(w, h), f)
		return err
	})
	return size, hex.EncodeToString(h.Sum(nil)), err
}

// sameContents reports whether dst exists and, if so, whether it holds the bytes of src.
func sameContents(src, dst string) (exists, same bool, err error) {
	di, err := os.Stat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	si, err := os.Stat(src)
	switch {
	case err != nil:
		return true, false, err
	case os.SameFile(si, di):
		return true, true, nil
	case si.Size() != di.Size() || !di.Mode().IsRegular():
		return true, false, nil
	}
	same, err = equalFiles(src, dst)
	return true, same, err
}

func equalFiles(a, b string) (bool, error) {
	fa, err := regfile.Open(a, 0)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := regfile.Open(b, 0)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	return equalReaders(fa, fb)
}

func equalReaders(a, b io.Reader) (bool, error) {
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(a, bufA)
		nb, errB := io.ReadFull(b, bufB)
		if err := cmpErr(errA, errB); err != nil {
			return false, err
		}
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		if errA != nil { // equal short reads: both ended
			return true, nil
		}
	}
}

// cmpErr returns the first of errA and errB that is not the end of its file.
func cmpErr(errA, errB error) error {
	for _, err := range []error{errA, errB} {
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return err
		}
	}
	return nil
}

// HashFile returns the size of the file name and its sha256, in hex.
func HashFile(name string) (int64, string, error) {
	f, err := regfile.Open(name, 0)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return n, hex.EncodeToString(h.Sum(nil)), err
}

// put inserts p, replacing the entry of the same name, version and platform, which it
// returns (none if there was none), and sorts the entries by name, version and platform.
func (ix *Index) put(p Package) (replaced []Package) {
	for _, q := range ix.Packages {
		if p.SameKey(q) {
			replaced = append(replaced, q)
		}
	}
	ix.Packages = slices.DeleteFunc(ix.Packages, p.SameKey)
	ix.Packages = append(ix.Packages, p)
	slices.SortFunc(ix.Packages, func(a, b Package) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := a.CompareVersion(b); c != 0 {
			return c
		}
		return strings.Compare(a.Platform, b.Platform)
	})
	return replaced
}

// SameKey reports whether p and q are entries of the same name, version and platform,
// which an index holds one of.
func (p Package) SameKey(q Package) bool {
	return q.Name == p.Name && q.Version == p.Version && q.Platform == p.Platform
}

// readIndex reads and parses the index at name, or returns an empty one, and missing,
// if there is none.
func readIndex(name string) (ix *Index, missing bool, err error) {
	f, err := regfile.Open(name, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return &Index{Format: indexFormat}, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxIndexSize+1))
	if err != nil {
		return nil, false, err
	}
	if ix, err = parse(data); err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	return ix, false, nil
}

// encode writes ix as indented JSON with a trailing newline, leaving "<" and ">" in
// depends unescaped.
func (ix *Index) encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	out := *ix
	out.Packages = slices.Clone(ix.Packages)
	for i := range out.Packages {
		out.Packages[i].Kind = writtenKind(out.Packages[i].Kind)
	}
	return enc.Encode(&out)
}

// writeFile replaces dir/name with what write writes, atomically and durably
// (durable.WriteFile), its temporary file named after it.
func writeFile(dir, name string, write func(io.Writer) error) error {
	return durable.WriteFile(dir, name, "."+name+".tmp-*", write)
}

// lockRetry is how often lockDir tries the lock again.
const lockRetry = 50 * time.Millisecond

// lockDir waits, until ctx is done, for the lock of the repository directory dir, and takes
// it: a flock of the directory itself (no file is added to what is published), as two adds,
// removes or signs at once would otherwise each write their own next index, and one would
// be lost. It tries without blocking, as a blocked flock(2) would not end at an interrupt.
// Holding it, it removes what writers killed before their rename left (removeLeftovers).
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0) // a FIFO at dir would block os.Open
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR && err != unix.EWOULDBLOCK {
			break
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, &os.PathError{Op: "lock", Path: dir, Err: ctx.Err()}
		case <-time.After(lockRetry):
		}
	}
	switch {
	case errors.Is(err, unix.EBADF) || errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP):
		// NFS and others lock no directory: go on as before there was a lock.
	case err != nil:
		f.Close()
		return nil, &os.PathError{Op: "lock", Path: dir, Err: err}
	}
	removeLeftovers(f, err == nil)
	return func() { f.Close() }, nil
}

// lockedIndex takes the lock of dir (lockDir) and reads its index, for a change of it.
func lockedIndex(ctx context.Context, dir string) (ix *Index, unlock func(), err error) {
	unlock, err = lockDir(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	if ix, _, err = readIndex(filepath.Join(dir, indexName)); err != nil {
		unlock()
		return nil, nil, err
	}
	return ix, unlock, nil
}
