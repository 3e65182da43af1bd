package oci

import "strings"

// challenge is one challenge of a WWW-Authenticate header (RFC 9110 section 11.6.1):
// its scheme, lowercased, and its parameters, their names lowercased.
type challenge struct {
	scheme string
	params map[string]string
}

// maxChallenges and maxParams bound what parseChallenges keeps of headers the registry
// writes, up to net/http's 10 MiB: a registry sends one or two challenges of a few
// parameters.
const (
	maxChallenges = 8
	maxParams     = 16
)

// parseChallenges reads the challenges of the WWW-Authenticate headers values, several
// per header or one header each, the first maxChallenges with their first maxParams
// parameters; what cannot be read ends its header.
func parseChallenges(values []string) []challenge {
	var out []challenge
	for _, v := range values {
		l := lexer{s: v}
		cur := -1
		for {
			l.skip(" \t,")
			tok := l.token()
			if tok == "" {
				break
			}
			l.skip(" \t")
			if cur < 0 || !l.next('=') {
				if len(out) == maxChallenges {
					return out
				}
				out = append(out, challenge{scheme: strings.ToLower(tok), params: map[string]string{}})
				cur = len(out) - 1
				continue
			}
			l.skip(" \t")
			val, ok := l.value()
			if !ok {
				break
			}
			if len(out[cur].params) < maxParams {
				out[cur].params[strings.ToLower(tok)] = val
			}
		}
	}
	return out
}

// pick returns the challenge pkg answers: Bearer, else Basic.
func pick(cs []challenge) (challenge, bool) {
	for _, scheme := range []string{"bearer", "basic"} {
		for _, c := range cs {
			if c.scheme == scheme {
				return c, true
			}
		}
	}
	return challenge{}, false
}

// lexer reads tokens and quoted strings (RFC 9110 section 5.6).
type lexer struct {
	s string
	i int
}

func (l *lexer) skip(set string) {
	for l.i < len(l.s) && strings.IndexByte(set, l.s[l.i]) >= 0 {
		l.i++
	}
}

// next consumes c if it comes next.
func (l *lexer) next(c byte) bool {
	if l.i < len(l.s) && l.s[l.i] == c {
		l.i++
		return true
	}
	return false
}

func (l *lexer) token() string {
	start := l.i
	for l.i < len(l.s) && isTchar(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

// value reads a quoted string, undoing its escapes, or else what comes before the next
// comma or space (a token, or a scope some registries send unquoted).
func (l *lexer) value() (string, bool) {
	if !l.next('"') {
		start := l.i
		for l.i < len(l.s) && strings.IndexByte(", \t", l.s[l.i]) < 0 {
			l.i++
		}
		return l.s[start:l.i], l.i > start
	}
	var b strings.Builder
	for l.i < len(l.s) {
		c := l.s[l.i]
		l.i++
		switch {
		case c == '"':
			return b.String(), true
		case c == '\\' && l.i < len(l.s):
			b.WriteByte(l.s[l.i])
			l.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

func isTchar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
