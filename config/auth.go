package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"pkg/internal/regfile"
)

// Auth is what the requests to a repository's hosts authenticate with: a bearer token, or
// else a user name and password (HTTP basic). Its String never shows them.
type Auth struct {
	Username, Password, Token string

	From string // where it was found, for messages: a variable's name, or the file and key
}

func (a Auth) String() string   { return "config.Auth{redacted}" }
func (a Auth) GoString() string { return a.String() }

// authTable is a repository's credential as its file gives it: inline, or in files.
type authTable struct {
	Token, Username, Password string
	TokenFile, PasswordFile   string
}

// maxSecretFile bounds a token-file or password-file.
const maxSecretFile = 64 << 10 // 64 KiB

// EnvPrefix is the start of the names of the variables of the repository name: its
// credential is PKG_REPO_<NAME>_TOKEN, or PKG_REPO_<NAME>_USERNAME and _PASSWORD, NAME upper
// case with each character but a letter or digit as "_".
func EnvPrefix(name string) string {
	var b strings.Builder
	b.WriteString("PKG_REPO_")
	for _, c := range strings.ToUpper(name) {
		if c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + "_"
}

// Credential returns what r's requests authenticate with, the first given of: its
// variables (CredentialVars, in order), then its file's token, token-file, username with
// password or password-file. Nothing given is the zero Auth. Errors name the variable or
// the file and key, never a secret.
func (r Repo) Credential() (Auth, error) {
	for _, p := range r.CredentialVars() {
		tok, user, pass := os.Getenv(p+"TOKEN"), os.Getenv(p+"USERNAME"), os.Getenv(p+"PASSWORD")
		switch {
		case tok != "":
			return Auth{Token: tok, From: p + "TOKEN"}, nil
		case user != "":
			return Auth{Username: user, Password: pass, From: p + "USERNAME and " + p + "PASSWORD"}, checkUser(user, p+"USERNAME")
		case pass != "":
			return Auth{}, fmt.Errorf("repository %s: %sPASSWORD is set without %sUSERNAME", r.Name, p, p)
		}
	}
	return r.auth.credential(r)
}

// CredentialVars returns the prefixes (EnvPrefix) of the variables r's credential is
// looked for in, in order: those of its name, then, for a repository pkg named, those of
// the name of its location, which it bears until its index is read and which count after.
// No name a file other than the configuration gives (a lockfile's index name, say) adds
// any: a lockfile edited to pair a configured repository's name with another URL would
// send that repository's credential there.
func (r Repo) CredentialVars() []string {
	ps := []string{EnvPrefix(r.Name)}
	if r.Naming == ByLocation && len(r.URLs) > 0 {
		if p := EnvPrefix(LocationName(r.URLs[0])); !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

func (a authTable) credential(r Repo) (Auth, error) {
	var err error
	out := Auth{Token: a.Token, Username: a.Username, Password: a.Password}
	if a.TokenFile != "" {
		out.Token, err = readSecret(a.TokenFile)
	}
	if a.PasswordFile != "" && err == nil {
		out.Password, err = readSecret(a.PasswordFile)
	}
	if err != nil {
		return Auth{}, &fileError{File: r.File, Key: "repo." + r.Name, Err: err}
	}
	if out != (Auth{}) {
		out.From = fmt.Sprintf("[repo.%s] in %s", r.Name, r.File)
	}
	return out, nil
}

// readSecret reads a token or password from the file name: its first line, without
// surrounding white space.
func readSecret(name string) (string, error) {
	b, err := regfile.ReadFile(name, maxSecretFile)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	s := strings.TrimSpace(line)
	if s == "" {
		return "", fmt.Errorf("%s: empty", name)
	}
	return s, nil
}

// checkUser refuses a user name HTTP basic authentication cannot carry.
func checkUser(user, where string) error {
	if strings.ContainsAny(user, ":\r\n") {
		return fmt.Errorf("%s: a user name holds no colon and no line break", where)
	}
	return nil
}

// checkAuth refuses a repository table's credential keys that do not go together, and an
// inline secret in a file other users can read.
func checkAuth(t repoTable, mode os.FileMode) error {
	switch {
	case t.Token != "" && t.TokenFile != "":
		return errors.New("token and token-file: give one")
	case t.Password != "" && t.PasswordFile != "":
		return errors.New("password and password-file: give one")
	case (t.Token != "" || t.TokenFile != "") && (t.Username != "" || t.Password != "" || t.PasswordFile != ""):
		return errors.New("a token, and a user name or password: give one")
	case (t.Password != "" || t.PasswordFile != "") && t.Username == "":
		return errors.New("a password without a username")
	case (t.Token != "" || t.Password != "") && mode.Perm()&0o077 != 0:
		return secretOpen(fmt.Sprintf("an inline token or password in a file of mode %04o, which other users can read or change (want 0600, or token-file or password-file)", mode.Perm()))
	}
	for _, f := range []string{t.TokenFile, t.PasswordFile} {
		if f != "" && !filepath.IsAbs(f) {
			return fmt.Errorf("%q is not an absolute path", f)
		}
	}
	return checkUser(t.Username, "username")
}

// ErrSecretOpen is the cause of the error for a token or password written in a
// configuration file other users can read or write.
var ErrSecretOpen = errors.New("config: secret in a file open to other users")

// secretOpen is ErrSecretOpen, saying why.
type secretOpen string

func (e secretOpen) Error() string        { return string(e) }
func (e secretOpen) Is(target error) bool { return target == ErrSecretOpen }

// NetrcFile returns the netrc file whose entries authenticate requests to hosts: $NETRC,
// else ~/.netrc; "" when neither is known.
func NetrcFile() string {
	if f := os.Getenv("NETRC"); f != "" {
		return f
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".netrc")
	}
	return ""
}
