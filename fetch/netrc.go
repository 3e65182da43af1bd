package fetch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"pkg/internal/regfile"
)

// maxNetrcSize bounds the netrc file read.
const maxNetrcSize = 1 << 20 // 1 MiB

// netrc is a netrc file as curl reads it (its netrc.c, and inetutils' ftp(1)): tokens
// between white space, or between double quotes with backslash escapes; # starts a
// comment; "machine NAME" starts an entry, "default" the entry of every other host, each
// with "login" and "password" (and "account", ignored); "macdef NAME" is followed by a
// macro up to the next empty line, skipped. The first entry of a host is its.
type netrc struct {
	machines []netrcEntry
	def      *Credential // the default entry, or nil
}

type netrcEntry struct {
	host string // lower case
	Credential
}

// credential returns the entry of host, else the default.
func (n *netrc) credential(host string) (Credential, credSource) {
	for _, m := range n.machines {
		if m.host == strings.ToLower(host) {
			return m.Credential, fromNetrc
		}
	}
	if n.def != nil {
		return *n.def, fromDefault
	}
	return Credential{}, fromNone
}

// NetrcError is a netrc file pkg refuses: a syntax error, or passwords in a file that
// other users can read or that is not the user's. It never quotes a password.
type NetrcError struct {
	File string
	Line int // 0 for the whole file
	Err  error
}

func (e *NetrcError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("netrc %s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("netrc %s: %v", e.File, e.Err)
}

func (e *NetrcError) Unwrap() error { return e.Err }

// ErrNetrcOpen is the cause of a NetrcError for passwords in a netrc file that other users
// can read or write, or that another user owns: as Python's netrc and inetutils' ftp
// refuse it, so that a password is never read from a file anyone else could have read it
// from or put it in.
var ErrNetrcOpen = errors.New("fetch: netrc file open to other users")

// readNetrc reads and parses the netrc file name; one that does not exist has no entries
// (nil, and an error that is fs.ErrNotExist).
func readNetrc(name string) (*netrc, error) {
	f, err := regfile.Open(name, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, err := readLimited(f, maxNetrcSize, name, "netrc")
	if err != nil {
		return nil, err
	}
	n, line, err := parseNetrc(string(data))
	if err != nil {
		return nil, &NetrcError{File: name, Line: line, Err: err}
	}
	if err := checkNetrcMode(n, fi); err != nil {
		return nil, &NetrcError{File: name, Err: err}
	}
	return n, nil
}

// checkNetrcMode refuses passwords in a file fi that is open to other users.
func checkNetrcMode(n *netrc, fi fs.FileInfo) error {
	has := n.def != nil && n.def.Password != ""
	for _, m := range n.machines {
		has = has || m.Password != ""
	}
	if !has {
		return nil
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return netrcOpen(fmt.Sprintf("it holds passwords and its mode is %04o: other users can read or change it (want 0600)", perm))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return netrcOpen(fmt.Sprintf("it holds passwords and belongs to user %d, not to user %d", st.Uid, os.Geteuid()))
	}
	return nil
}

// netrcOpen is ErrNetrcOpen, saying why.
type netrcOpen string

func (e netrcOpen) Error() string        { return string(e) }
func (e netrcOpen) Is(target error) bool { return target == ErrNetrcOpen }

// parseNetrc parses the text of a netrc file; an error comes with its line.
func parseNetrc(text string) (*netrc, int, error) {
	n := &netrc{}
	lx := &netrcLexer{s: text, line: 1}
	var cur *Credential // the entry the keywords fill
	prev := ""          // the keyword before this one
	for {
		tok, ok, err := lx.next()
		switch {
		case err != nil:
			return nil, lx.line, err
		case !ok:
			return n, 0, nil
		}
		kw := prev
		prev = tok
		switch tok {
		case "machine":
			host, err := lx.value(tok)
			if err != nil {
				return nil, lx.line, err
			}
			n.machines = append(n.machines, netrcEntry{host: strings.ToLower(host)})
			cur = &n.machines[len(n.machines)-1].Credential
		case "default":
			if n.def != nil {
				return nil, lx.line, errors.New("a second default entry")
			}
			n.def = &Credential{}
			cur = n.def
		case "login", "password", "account":
			v, err := lx.value(tok)
			if err != nil {
				return nil, lx.line, err
			}
			if cur == nil {
				return nil, lx.line, fmt.Errorf("%s before any machine or default", tok)
			}
			if tok == "login" {
				cur.Username = v
			} else if tok == "password" {
				cur.Password = v
			}
		case "macdef":
			if _, err := lx.value(tok); err != nil {
				return nil, lx.line, err
			}
			lx.skipMacro()
		default:
			if kw == "password" {
				// Not quoted: most likely the rest of a password holding a space.
				return nil, lx.line, errors.New("unknown keyword after a password (quote a password holding spaces)")
			}
			return nil, lx.line, fmt.Errorf("unknown keyword %.40q", tok)
		}
	}
}

// netrcLexer splits a netrc file into tokens, counting lines.
type netrcLexer struct {
	s    string
	line int
}

// next returns the next token, or ok false at the end.
func (l *netrcLexer) next() (tok string, ok bool, err error) {
	l.skipSpace()
	if l.s == "" {
		return "", false, nil
	}
	if l.s[0] != '"' {
		i := strings.IndexAny(l.s, " \t\r\n")
		if i < 0 {
			i = len(l.s)
		}
		tok, l.s = l.s[:i], l.s[i:]
		return tok, true, nil
	}
	var b strings.Builder
	for i := 1; i < len(l.s); i++ {
		switch c := l.s[i]; {
		case c == '"':
			l.s = l.s[i+1:]
			return b.String(), true, nil
		case c == '\\' && i+1 < len(l.s):
			i++
			b.WriteByte(unescape(l.s[i]))
		case c == '\n':
			return "", false, errors.New("a quoted string runs past the end of its line")
		default:
			b.WriteByte(c)
		}
	}
	return "", false, errors.New("a quoted string has no closing quote")
}

// unescape is the byte a backslash before c stands for.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c
}

// value returns the token after the keyword kw.
func (l *netrcLexer) value(kw string) (string, error) {
	v, ok, err := l.next()
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("%s without a value at the end of the file", kw)
	}
	return v, nil
}

// skipSpace skips white space and comments.
func (l *netrcLexer) skipSpace() {
	for l.s != "" {
		switch l.s[0] {
		case '\n':
			l.line++
			fallthrough
		case ' ', '\t', '\r':
			l.s = l.s[1:]
		case '#':
			i := strings.IndexByte(l.s, '\n')
			if i < 0 {
				i = len(l.s)
			}
			l.s = l.s[i:]
		default:
			return
		}
	}
}

// skipMacro skips the rest of a macdef's line and its body, up to an empty line.
func (l *netrcLexer) skipMacro() {
	for l.s != "" {
		i := strings.IndexByte(l.s, '\n')
		if i < 0 {
			l.s = ""
			return
		}
		l.s = l.s[i+1:]
		l.line++
		if strings.HasPrefix(l.s, "\n") || strings.HasPrefix(l.s, "\r\n") {
			return
		}
	}
}
