package fetch

import (
	"context"
	"os"

	"pkg/repo"
)

// Local returns a path to read archive from, a path or an http(s) URL: the path itself, or
// a temporary download of the URL (downloadFile), which cleanup removes; remote says which.
// A download the server refuses is a *DeniedError, which says whether the URL held user
// information.
func Local(ctx context.Context, archive string) (path string, remote bool, cleanup func(), err error) {
	if !repo.IsURL(archive) {
		return archive, false, func() {}, nil
	}
	f, err := os.CreateTemp("", "pkg-download-*")
	if err != nil {
		return "", false, nil, err
	}
	cleanup = func() { f.Close(); os.Remove(f.Name()) }
	if err := downloadFile(ctx, archive, f); err != nil {
		cleanup()
		return "", false, nil, refusal(Options{}, archive).denied(err)
	}
	return f.Name(), true, cleanup, nil
}
