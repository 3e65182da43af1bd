package fetch

import (
	"net/url"
	"path/filepath"
	"strings"

	"pkg/repo"
)

// URL returns the repository's directory as an absolute URL ending in a slash, without
// user information: an http(s) URL, or a file URL for a local repository.
func (s *Source) URL() string {
	if s.base != nil {
		u := *s.base
		u.User = nil
		return u.String()
	}
	return fileURL(s.dir + string(filepath.Separator))
}

// ArchiveURL returns the absolute URL of p's archive, without user information, as
// Fetch would read it: for an index entry of this repository, or for a package whose
// Archive is already such a URL.
func (s *Source) ArchiveURL(p repo.Package) string {
	u, err := url.Parse(p.Archive)
	switch {
	case err == nil && u.Scheme != "" && len(u.Scheme) > 1:
		u.User = nil
		return u.String()
	case s.base != nil:
		u = s.base.JoinPath(p.Archive)
		u.User = nil
		return u.String()
	}
	return fileURL(filepath.Join(s.dir, filepath.FromSlash(p.Archive)))
}

// Relocate returns p with its Archive, an absolute URL under the repository URL from,
// made relative to from, so that Fetch reads it from this source: a mirror, or the same
// repository with its credentials. Other packages are returned as they are.
func (s *Source) Relocate(p repo.Package, from string) repo.Package {
	rel, ok := strings.CutPrefix(p.Archive, from)
	if !ok || !strings.HasSuffix(from, "/") {
		return p
	}
	if rel, err := url.PathUnescape(rel); err == nil && rel != "" && !strings.ContainsAny(rel, "?#") {
		p.Archive = rel
	}
	return p
}

func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
