package trust

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"pkg/repo"
)

// An ExposedKeyError is a signing key file others can read: whoever reads it can sign.
type ExposedKeyError struct {
	Path string
	Mode fs.FileMode // its permission bits
}

func (e *ExposedKeyError) Error() string {
	return fmt.Sprintf("signing key %s can be read by others (mode %04o): whoever reads it can sign for you; chmod 600 %s", e.Path, e.Mode, e.Path)
}

// ReadSigningKeys reads the signing key files at paths (ReadKeyFile), and says which of
// them others can read.
func ReadSigningKeys(paths []string) (keys []PrivateKey, exposed []*ExposedKeyError, err error) {
	for _, path := range paths {
		k, err := ReadKeyFile(path)
		if err != nil {
			return nil, exposed, err
		}
		if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o077 != 0 {
			exposed = append(exposed, &ExposedKeyError{Path: path, Mode: info.Mode().Perm()})
		}
		keys = append(keys, k)
	}
	return keys, exposed, nil
}

// NewSigner returns a signer of the index of the repository name ("" keeps the index's)
// with keys, valid until expires; nil without keys.
func NewSigner(name string, expires time.Time, keys []PrivateKey) *repo.Signer {
	if len(keys) == 0 {
		return nil
	}
	return &repo.Signer{Name: name, Expires: expires, Sign: func(index []byte) []byte { return Sign(index, keys...) }}
}
