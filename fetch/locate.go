package fetch

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"pkg/internal/termtext"
	"pkg/repo"
)

// URL returns the repository's directory as an absolute URL ending in a slash, without
// user information: an http(s) URL, or a file URL for a local repository.
func (s *Source) URL() string { return s.t.url() }

// ArchiveURL returns the absolute URL of p's archive, without user information, as
// Fetch would read it: for an index entry of this repository, or for a package whose
// Archive is already such a URL.
func (s *Source) ArchiveURL(p repo.Package) string {
	u, err := url.Parse(p.Archive)
	switch {
	case err == nil && u.Scheme != "" && len(u.Scheme) > 1:
		return termtext.WithoutUser(u)
	}
	return s.t.archiveURL(p.Archive)
}

// Relocate returns p with its Archive, an absolute URL under the repository URL from,
// made relative to from, so that Fetch reads it from this source: a mirror, or the same
// repository with its credentials. Other packages are returned as they are. It refuses an
// archive whose path under from, decoded, would not name a file beneath this source, and
// a local source that is not a repository (no index.json): a lockfile's repository may
// name any directory, such as /etc/; an offline source reads no repository, so it checks
// none, and an archive the cache lacks is then refused as not cached, not as a repository
// gone. Fetch reads no file URL that Relocate did not make a path.
func (s *Source) Relocate(p repo.Package, from string) (repo.Package, error) {
	raw, ok := strings.CutPrefix(p.Archive, from)
	if !ok || !strings.HasSuffix(from, "/") || raw == "" || strings.ContainsAny(raw, "?#") {
		return p, nil
	}
	rel, err := url.PathUnescape(raw)
	if err == nil {
		err = checkRelative(raw, rel)
	}
	if err != nil {
		return p, &pathError{archive: p.Archive, from: from, err: err}
	}
	if !s.offline {
		if err := s.t.checkRepository(); err != nil {
			return p, err
		}
	}
	p.Archive = rel
	return p, nil
}

// Reasons checkRelative refuses a path, inside a pathError.
var (
	errPathSlash   error = &reason{"encoded slash or backslash"}
	errPathByte    error = &reason{"backslash or NUL byte"}
	errPathPercent error = &reason{"encoded percent sign"}
	errPathSegment error = &reason{"segment"}
)

// segmentError is errPathSegment for one segment of a path.
type segmentError struct{ seg string }

func (e *segmentError) Error() string        { return fmt.Sprintf("%v %q", errPathSegment, e.seg) }
func (e *segmentError) Is(target error) bool { return target == errPathSegment }

// pathError refuses an archive URL whose path under the repository URL from names no
// file beneath it.
type pathError struct {
	archive, from string
	err           error // one of the errPath* reasons, or the path's unescaping error
}

func (e *pathError) Error() string {
	return fmt.Sprintf("archive URL %s: path under %s: %s", e.archive, e.from, said(e.err))
}

func (e *pathError) Unwrap() error { return e.err }

// checkRelative refuses rel, the decoded form of the URL path raw, unless it is a clean
// relative path whose segments name the same files on a disk and on a server.
func checkRelative(raw, rel string) error {
	lower := strings.ToLower(raw)
	switch {
	case strings.Contains(lower, "%2f"), strings.Contains(lower, "%5c"):
		return errPathSlash
	case strings.ContainsAny(rel, "\\\x00"):
		return errPathByte
	case strings.Contains(rel, "%"):
		// Decoded twice on the way (url.URL.JoinPath reads its elements as escaped).
		return errPathPercent
	}
	// Enough for filepath.IsLocal too: no segment is empty (no leading slash), "." or "..".
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return &segmentError{seg}
		}
	}
	return nil
}

func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
