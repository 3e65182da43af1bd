// Package config reads pkg's configuration files: the repositories to use, by name, each
// with its URLs (the first, then mirrors), its trusted keys and its priority, and the
// cache's default limits.
//
// Three files are read, each optional, and merged in this order, a later one winning:
// the system's (/etc/pkg/config.toml), the user's ($XDG_CONFIG_HOME/pkg/config.toml,
// ~/.config/pkg/config.toml by default) and the root's (<root>/.pkg/config.toml). A
// repository is defined whole by the last file that names it or gives its location, but
// for its keys: those of every file that gives its location are trusted, so that a later
// file never drops an earlier one's. A cache limit is taken from the last file that sets
// it. Flags and PKG_* variables win over all files: that is the caller's to apply. The
// format is in docs/config.md.
//
// The files are TOML, read with github.com/pelletier/go-toml/v2: in strict mode it names
// the line and column of an unknown key, which BurntSushi/toml cannot (its Undecoded keys
// carry no position), and it decoded a realistic file 5 times as fast with a sixth of the
// allocations, for 104 KiB more in a stripped binary than BurntSushi's (docs/config.md).
package config

import (
	"bytes"
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"pkg/internal/regfile"
	"pkg/internal/termtext"
)

// maxFileSize bounds a configuration file.
const maxFileSize = 1 << 20 // 1 MiB

// systemFile is the system-wide configuration file.
const systemFile = "/etc/pkg/config.toml"

// Config is the configuration the files give together.
type Config struct {
	Repos []Repo // highest priority first; among equal priorities, by name
	Cache Cache
	// DigestMirrors are asked for every repository's archives by sha256 (LOCATION/sha256/<hex>),
	// after a repository's own, before the URL its index names; the last file that sets them wins.
	DigestMirrors []string
	digestSet     bool

	maxSizeSet, olderThanSet bool // the file set them, if only to 0
}

// Repo is a repository the configuration names.
type Repo struct {
	Name     string   // as the configuration names it: [repo.NAME]
	URLs     []string // the repository's location, then its mirrors, in order of use
	Keys     []string // trusted keys for it, [REPO=]pkg-ed25519:..., as pkg trust add takes them, from each file that gives its location
	Priority int      // a name resolves from the highest-priority repository that has it
	File     string   // the file that defined it
	Lock     string   // the path of the lockfile that recorded it (LockRepos); "" for one given elsewhere
	Naming   Naming   // who gave Name

	// DigestMirrors are asked for its archives by sha256 before any configured for every
	// repository (Config.DigestMirrors).
	DigestMirrors []string

	// CleartextCredentials sends its credential over plain http to hosts that are not this
	// machine, which pkg otherwise refuses.
	CleartextCredentials bool
	auth                 authTable // its file's credential (Credential)
	keyFiles             []string  // the file of each of Keys, "" for File (KeyFile)
}

// Naming is who gave a repository its name.
type Naming int

const (
	ByUser     Naming = iota // the configuration ([repo.NAME]) or the command line (NAME=LOCATION)
	ByLocation               // pkg, after its location (LocationName): the name its index gives itself takes its place
	ByLock                   // a lockfile, as it records it
)

// Cache is what the configuration says of the cache: defaults for pkg cache prune.
type Cache struct {
	MaxSize   int64         // bytes; 0: no limit
	OlderThan time.Duration // 0: no limit
}

// fileError is an error in a configuration file, where it is.
type fileError struct {
	File      string
	Line, Col int    // 1-based; 0 when the error has no place
	Key       string // the dotted key, or ""
	Err       error
}

func (e *fileError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Key != "" {
		return fmt.Sprintf("config %s: %s: %v", where, e.Key, e.Err)
	}
	return fmt.Sprintf("config %s: %v", where, e.Err)
}

func (e *fileError) Unwrap() error { return e.Err }

// Files returns the files Load reads for the root at root ("" for none), the first of
// the lowest precedence.
func Files(root string) []string {
	files := []string{systemFile}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) { // the XDG Base Directory spec: a relative value is ignored
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".config")
		} else {
			dir = ""
		}
	}
	if dir != "" {
		files = append(files, filepath.Join(dir, "pkg", "config.toml"))
	}
	if root != "" {
		files = append(files, filepath.Join(root, ".pkg", "config.toml"))
	}
	return files
}

// Load reads the files that exist among files, the first of the lowest precedence, and
// merges them.
func Load(files ...string) (*Config, error) {
	var parsed []*Config
	for _, name := range files {
		data, err := regfile.ReadFile(name, maxFileSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &fileError{File: name, Err: err}
		}
		fi, err := os.Stat(name)
		if err != nil {
			return nil, &fileError{File: name, Err: err}
		}
		c, err := parse(name, data, fi.Mode())
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, c)
	}
	return merge(parsed...), nil
}

// merge merges configurations, the first of the lowest precedence: a repository is the
// last one of its name or its location (one location is one repository), with the keys
// of each one before it at its location too, and each cache limit the last one set.
func merge(configs ...*Config) *Config {
	out := &Config{}
	byName := make(map[string]Repo)
	for _, c := range configs {
		for _, r := range c.Repos {
			for n, was := range byName {
				if SameLocation(was.URLs[0], r.URLs[0]) {
					r = r.keeping(was)
					delete(byName, n)
				}
			}
			byName[r.Name] = r
		}
		if c.maxSizeSet {
			out.Cache.MaxSize, out.maxSizeSet = c.Cache.MaxSize, true
		}
		if c.olderThanSet {
			out.Cache.OlderThan, out.olderThanSet = c.Cache.OlderThan, true
		}
		if c.digestSet {
			out.DigestMirrors, out.digestSet = c.DigestMirrors, true
		}
	}
	for _, r := range byName {
		out.Repos = append(out.Repos, r)
	}
	sortRepos(out.Repos)
	return out
}

// keeping returns r, which takes the place of was at its location, trusting was's keys
// besides its own: a file read later, such as a user's that adds a credential, never
// drops a key an earlier one, such as the system's, gives a location.
func (r Repo) keeping(was Repo) Repo {
	r.Keys, r.keyFiles = slices.Clone(r.Keys), make([]string, len(r.Keys))
	for i, k := range was.Keys {
		if !slices.Contains(r.Keys, k) {
			r.Keys, r.keyFiles = append(r.Keys, k), append(r.keyFiles, was.KeyFile(i))
		}
	}
	return r
}

// KeyFile returns the file that gave r.Keys[i]: r.File, or that of a repository at its
// location in a file read before (Load).
func (r Repo) KeyFile(i int) string {
	if i < len(r.keyFiles) && r.keyFiles[i] != "" {
		return r.keyFiles[i]
	}
	return r.File
}

func sortRepos(rs []Repo) {
	slices.SortFunc(rs, func(a, b Repo) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), strings.Compare(a.Name, b.Name))
	})
}

// file is a configuration file as TOML, its values checked as they are decoded.
type file struct {
	DigestMirrors []location           `toml:"digest-mirrors"`
	Repo          map[string]repoTable `toml:"repo"`
	Cache         struct {
		MaxSize   size     `toml:"max-size"`
		OlderThan duration `toml:"older-than"`
	} `toml:"cache"`
}

type repoTable struct {
	URLs         []location `toml:"urls"`
	Keys         []key      `toml:"keys"`
	Priority     int        `toml:"priority"`
	Token        string     `toml:"token"`
	TokenFile    string     `toml:"token-file"`
	Username     string     `toml:"username"`
	Password     string     `toml:"password"`
	PasswordFile string     `toml:"password-file"`
	Cleartext    bool       `toml:"cleartext-credentials"`
	Digest       []location `toml:"digest-mirrors"`
}

// shape is file with plain types, decoded first: its errors are those of keys and types
// alone, and the messages of the types say what each key wants (typeOf).
type shape struct {
	DigestMirrors *[]string `toml:"digest-mirrors"`
	Repo          map[string]struct {
		URLs         []string `toml:"urls"`
		Keys         []string `toml:"keys"`
		Priority     int      `toml:"priority"`
		Token        string   `toml:"token"`
		TokenFile    string   `toml:"token-file"`
		Username     string   `toml:"username"`
		Password     string   `toml:"password"`
		PasswordFile string   `toml:"password-file"`
		Cleartext    bool     `toml:"cleartext-credentials"`
		Digest       []string `toml:"digest-mirrors"`
	} `toml:"repo"`
	Cache struct {
		MaxSize   string `toml:"max-size"`
		OlderThan string `toml:"older-than"`
	} `toml:"cache"`
}

// typeOf is what each key of shape holds, by the last part of its name.
var typeOf = map[string]string{
	"urls": "a list of strings", "keys": "a list of strings", "priority": "an integer",
	"max-size": `a string such as "20GiB"`, "older-than": `a string such as "30d"`,
	"repo": "tables, [repo.NAME]", "cache": "a table, [cache]",
	"token": "a string", "token-file": "a string", "username": "a string", "password": "a string",
	"password-file": "a string", "cleartext-credentials": "true or false", "digest-mirrors": "a list of strings",
}

// parse parses the configuration file name holding data, of mode. Unknown keys, values of
// the wrong type and values that are not valid are errors naming the file, the line and
// the key.
func parse(name string, data []byte, mode os.FileMode) (*Config, error) {
	var sh shape
	if err := decode(data, &sh); err != nil {
		return nil, decodeError(name, err, nil)
	}
	var f file
	if err := decode(data, &f); err != nil {
		return nil, decodeError(name, err, &sh)
	}
	c := &Config{Cache: Cache{MaxSize: f.Cache.MaxSize.n, OlderThan: f.Cache.OlderThan.d},
		maxSizeSet: sh.Cache.MaxSize != "", olderThanSet: sh.Cache.OlderThan != "", digestSet: sh.DigestMirrors != nil}
	for _, u := range f.DigestMirrors {
		c.DigestMirrors = append(c.DigestMirrors, u.s)
	}
	for n, t := range f.Repo {
		if err := checkName(n); err != nil {
			return nil, &fileError{File: name, Key: "repo." + n, Err: err}
		}
		if len(t.URLs) == 0 {
			return nil, &fileError{File: name, Key: "repo." + n, Err: errors.New("no urls")}
		}
		if err := checkAuth(t, mode); err != nil {
			return nil, &fileError{File: name, Key: "repo." + n, Err: err}
		}
		r := Repo{Name: n, Priority: t.Priority, File: name, CleartextCredentials: t.Cleartext,
			auth: authTable{Token: t.Token, TokenFile: t.TokenFile, Username: t.Username, Password: t.Password, PasswordFile: t.PasswordFile}}
		for _, u := range t.URLs {
			r.URLs = append(r.URLs, u.s)
		}
		for _, k := range t.Keys {
			r.Keys = append(r.Keys, k.s)
		}
		for _, u := range t.Digest {
			r.DigestMirrors = append(r.DigestMirrors, u.s)
		}
		c.Repos = append(c.Repos, r)
	}
	sortRepos(c.Repos)
	return c, oneName(name, data, c.Repos)
}

// oneName refuses two repositories of the file name, holding data, at one location: a
// location is one repository, with one name ([repo.NAME]) its index and pins know it by.
// The error, a *LocationError, is at the urls of the one written later.
func oneName(name string, data []byte, rs []Repo) error {
	for i, a := range rs {
		for _, b := range rs[i+1:] {
			if !SameLocation(a.URLs[0], b.URLs[0]) {
				continue
			}
			first, firstCol := place(data, "repo", a.Name, "urls")
			line, col := place(data, "repo", b.Name, "urls")
			if line < first || line == first && col < firstCol {
				a, b, first, line, col = b, a, line, first, firstCol
			}
			return &fileError{File: name, Line: line, Col: col, Key: "repo." + b.Name + ".urls",
				Err: &LocationError{Name: b.Name, Other: a.Name, OtherLine: first, Location: termtext.WithoutCredentials(b.URLs[0]),
					Credential: hasUser(a.URLs[0]) || hasUser(b.URLs[0])}}
		}
	}
	return nil
}

// LocationError refuses a repository of a configuration file at the location of another
// of that file (SameLocation): one location is one repository, known by one name, with
// one set of keys, whatever user information its URL holds.
type LocationError struct {
	Name, Other string // the repository written later, and the one before it
	OtherLine   int    // Other's urls, in the file
	Location    string // Name's first URL, without user information
	Credential  bool   // a URL of the two holds user information: they differ in their credential alone
}

func (e *LocationError) Error() string {
	if e.Credential {
		return fmt.Sprintf("%q is the location of repo.%s (line %d) too, user information apart: one location is one repository, whatever credential its URL holds; a credential belongs in the repository's token, username and password settings or the netrc file (docs/config.md#credentials)",
			e.Location, e.Other, e.OtherLine)
	}
	return fmt.Sprintf("%q is the location of repo.%s (line %d) too: one location is one repository, known by one name", e.Location, e.Other, e.OtherLine)
}

// hasUser reports whether the URL loc holds user information.
func hasUser(loc string) bool {
	u, err := url.Parse(loc)
	return err == nil && u.User != nil
}

// place returns the line and column in the TOML data of the expression that sets key, or
// a table or inline table holding it; 0, 0 if none does.
func place(data []byte, key ...string) (line, col int) {
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var k []string
		var first *unstable.Node
		for it := e.Key(); it.Next(); {
			if first == nil {
				first = it.Node()
			}
			k = append(k, string(it.Node().Data))
		}
		if e.Kind == unstable.Table {
			table = k
		} else if e.Kind == unstable.KeyValue {
			k = append(slices.Clone(table), k...)
		}
		n := min(len(k), len(key))
		if n >= 2 && slices.Equal(k[:n], key[:n]) && (e.Kind == unstable.KeyValue || len(k) == len(key)) && first != nil {
			pos := p.Shape(first.Raw).Start
			return pos.Line, pos.Column
		}
	}
	return 0, 0
}

func decode(data []byte, v any) error {
	d := toml.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// decodeError places a decoder's error in the file name. Without sh, of the shape's
// decoding, an error at a key is one of type, and says what the key wants; with sh, the
// file's decoding failed at a value a check refused, which sh's cause names.
func decodeError(name string, err error, sh *shape) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		line, col := e.Position()
		return &fileError{File: name, Line: line, Col: col, Key: strings.Join(e.Key(), "."), Err: errUnknownKey}
	}
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return &fileError{File: name, Err: err}
	}
	line, col := de.Position()
	e := &fileError{File: name, Line: line, Col: col, Key: strings.Join(de.Key(), "."), Err: err}
	k := de.Key()
	switch {
	case sh == nil && len(k) > 0 && typeOf[k[len(k)-1]] != "":
		e.Err = fmt.Errorf("want %s", typeOf[k[len(k)-1]])
	case sh != nil:
		if cause := sh.cause(k); cause != nil {
			e.Err = cause
		}
	}
	return e
}

// cause returns the error of the first value at key k of s that its check refuses: that
// at which the decoding into file stopped, the values of a list being checked in order.
func (s *shape) cause(k []string) error {
	switch {
	case len(k) == 3 && k[0] == "repo" && k[2] == "urls":
		return firstError[location](s.Repo[k[1]].URLs...)
	case len(k) == 3 && k[0] == "repo" && k[2] == "digest-mirrors":
		return firstError[location](s.Repo[k[1]].Digest...)
	case len(k) == 1 && k[0] == "digest-mirrors" && s.DigestMirrors != nil:
		return firstError[location](*s.DigestMirrors...)
	case len(k) == 3 && k[0] == "repo" && k[2] == "keys":
		return firstError[key](s.Repo[k[1]].Keys...)
	case len(k) == 2 && k[0] == "cache" && k[1] == "max-size":
		return firstError[size](s.Cache.MaxSize)
	case len(k) == 2 && k[0] == "cache" && k[1] == "older-than":
		return firstError[duration](s.Cache.OlderThan)
	}
	return nil
}

func firstError[T any, PT interface {
	*T
	encoding.TextUnmarshaler
}](values ...string) error {
	for _, v := range values {
		if err := PT(new(T)).UnmarshalText([]byte(v)); err != nil {
			return err
		}
	}
	return nil
}

// errUnknownKey is the cause of a fileError for a key the format does not have.
var errUnknownKey = errors.New("unknown key")
