package trust

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"pkg/internal/durable"
	"pkg/internal/regfile"
	"pkg/repo"
)

const (
	publicPrefix = "pkg-ed25519:"
	secretPrefix = "pkg-ed25519-secret:"
)

// Bounds of what ReadKeyFile and the trusted-keys files read: a key file is one key and
// its comment line; a trusted-keys file, thousands of keys.
const (
	maxKeyFileSize  = 64 << 10 // 64 KiB
	maxKeysFileSize = 1 << 20  // 1 MiB
)

// PublicKey is a publisher's key, as pkg trusts it: optionally bound to one repository.
type PublicKey struct {
	key  ed25519.PublicKey
	Repo string // the only repository name the key may sign, or "" for any
}

// Reasons ParsePublicKey refuses a key.
var (
	ErrKey        = errors.New("trust: not a public key")
	ErrPrivateKey = errors.New("trust: a private signing key where a public key is trusted")
)

// ParsePublicKey parses "[REPO=]pkg-ed25519:<base64>"; it refuses anything
// else with ErrKey, and a private key, which it does not echo, with ErrPrivateKey.
func ParsePublicKey(s string) (PublicKey, error) {
	var k PublicKey
	if strings.Contains(s, secretPrefix) { // never echoed: it would end up in logs
		return k, &causeError{fmt.Sprintf("a private signing key (%s...) was given where a public key is trusted: pass the public key, %s<base64>, the first line of the key file", secretPrefix, publicPrefix), ErrPrivateKey}
	}
	text := s
	if !strings.HasPrefix(s, publicPrefix) {
		name, rest, ok := strings.Cut(s, "=")
		if !ok || name == "" || !strings.HasPrefix(rest, publicPrefix) {
			return k, &causeError{fmt.Sprintf("key %.80q is not [REPO=]%s<base64>", s, publicPrefix), ErrKey}
		}
		if !repo.ValidRepoName(name) {
			return k, &causeError{fmt.Sprintf("key %.80q: %q is not a repository name ([a-z0-9][a-z0-9._+-]*)", s, name), ErrKey}
		}
		k.Repo, text = name, rest
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(text[len(publicPrefix):])
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return k, &causeError{fmt.Sprintf("key %.80q: want %s and the base64 of %d bytes", s, publicPrefix, ed25519.PublicKeySize), ErrKey}
	}
	k.key = raw
	return k, nil
}

// ParseKeyID returns the id of s, a key as ParsePublicKey parses it or a key id of 16 hex
// digits, and false if s is neither.
func ParseKeyID(s string) (string, bool) {
	if k, err := ParsePublicKey(s); err == nil {
		return k.ID(), true
	}
	return s, len(s) == 16 && strings.Trim(s, "0123456789abcdef") == ""
}

// parseKeys parses trusted keys separated by commas, spaces or newlines; "#" starts a
// comment that runs to the end of its line.
func parseKeys(text string) ([]PublicKey, error) {
	var keys []PublicKey
	for line := range strings.Lines(text) {
		ks, err := parseLine(line)
		if err != nil {
			return nil, err
		}
		keys = append(keys, ks...)
	}
	return keys, nil
}

// parseLine parses the keys of one line of parseKeys's text. The String of each is its
// text, ParsePublicKey reading the base64 strictly (FuzzParseKeys).
func parseLine(line string) ([]PublicKey, error) {
	line, _, _ = strings.Cut(line, "#")
	var keys []PublicKey
	for _, f := range strings.FieldsFunc(line, isKeySeparator) {
		k, err := ParsePublicKey(f)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func isKeySeparator(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// ID names the key in messages and signature files: the first 8 bytes of the sha256 of
// the public key, in hex.
func (k PublicKey) ID() string { return keyID(k.key) }

func keyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// String returns the key as ParsePublicKey reads it.
func (k PublicKey) String() string {
	s := publicPrefix + base64.StdEncoding.EncodeToString(k.key)
	if k.Repo != "" {
		s = k.Repo + "=" + s
	}
	return s
}

// Scope says which repositories k may sign: "for any repository", or "for repository
// NAME only".
func (k PublicKey) Scope() string {
	if k.Repo == "" {
		return "for any repository"
	}
	return "for repository " + k.Repo + " only"
}

// PrivateKey is a publisher's signing key.
type PrivateKey struct {
	key ed25519.PrivateKey
}

// GenerateKey returns a new signing key.
func GenerateKey() (PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("generate key: %w", err)
	}
	return PrivateKey{priv}, nil
}

// Public returns the key that verifies k's signatures, bound to no repository.
func (k PrivateKey) Public() PublicKey { return PublicKey{key: k.key.Public().(ed25519.PublicKey)} }

// WriteKeyFile writes k to a new file at path, readable by its owner only. It refuses to
// replace an existing file: a signing key lost is a repository its users must re-trust.
func WriteKeyFile(path string, k PrivateKey) error {
	if err := writeNew(path, k.marshal()); err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	return nil
}

func (k PrivateKey) marshal() []byte {
	pub := k.Public()
	return fmt.Appendf(nil, "# pkg signing key %s: %s\n%s%s\n", pub.ID(), pub,
		secretPrefix, base64.StdEncoding.EncodeToString(k.key.Seed()))
}

// ReadKeyFile reads a signing key written by WriteKeyFile.
func ReadKeyFile(path string) (PrivateKey, error) {
	data, err := regfile.ReadFile(path, maxKeyFileSize)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("read key: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		seed, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(line, secretPrefix))
		if !strings.HasPrefix(line, secretPrefix) || err != nil || len(seed) != ed25519.SeedSize {
			break
		}
		return PrivateKey{ed25519.NewKeyFromSeed(seed)}, nil
	}
	return PrivateKey{}, fmt.Errorf("%s is not a pkg signing key (%s<base64 of %d bytes>)", path, secretPrefix, ed25519.SeedSize)
}

// causeError is an error worded in full that wraps its cause (fs.ErrExist or
// fs.ErrNotExist for a key file, ErrKey for a key), so callers match the cause
// and read one sentence.
type causeError struct {
	msg string
	err error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }

// writeNew writes data to a new file at path, mode 0600: a temporary file in the same
// directory, synced, then linked to path, which fails if path exists.
func writeNew(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(path, data, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return &causeError{fmt.Sprintf("directory %s does not exist: create it first (mkdir -m 700 %s)", dir, dir), err}
	}
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return &causeError{path + " exists: remove it first if you mean to replace that key", err}
		}
		return err
	}
	return durable.Path(dir)
}

// writeTemp writes data to a new temporary file of mode perm in the directory of path,
// synced, and returns its name; on error it leaves no file.
func writeTemp(path string, data []byte, perm fs.FileMode) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}
