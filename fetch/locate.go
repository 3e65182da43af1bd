package fetch

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

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
		u.User = nil
		return u.String()
	}
	return s.t.archiveURL(p.Archive)
}

// Relocate returns p with its Archive, an absolute URL under the repository URL from,
// made relative to from, so that Fetch reads it from this source: a mirror, or the same
// repository with its credentials. Other packages are returned as they are. It refuses an
// archive whose path under from, decoded, would not name a file beneath this source, and
// a local source that is not a repository (no index.json): a lockfile's repository may
// name any directory, such as /etc/. Fetch reads no file URL that Relocate did not make
// a path.
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
		return p, fmt.Errorf("fetch: archive URL %s: path under %s: %v", p.Archive, from, err)
	}
	if err := s.t.checkRepository(); err != nil {
		return p, err
	}
	p.Archive = rel
	return p, nil
}

// checkRelative refuses rel, the decoded form of the URL path raw, unless it is a clean
// relative path whose segments name the same files on a disk and on a server.
func checkRelative(raw, rel string) error {
	lower := strings.ToLower(raw)
	switch {
	case strings.Contains(lower, "%2f"), strings.Contains(lower, "%5c"):
		return errors.New("encoded slash or backslash")
	case strings.ContainsAny(rel, "\\\x00"):
		return errors.New("backslash or NUL byte")
	case strings.Contains(rel, "%"):
		// Decoded twice on the way (url.URL.JoinPath reads its elements as escaped).
		return errors.New("encoded percent sign")
	}
	// Enough for filepath.IsLocal too: no segment is empty (no leading slash), "." or "..".
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("segment %q", seg)
		}
	}
	return nil
}

func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
