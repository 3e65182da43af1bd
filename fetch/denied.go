package fetch

import (
	"errors"
	"fmt"
	"net/url"

	"pkg/internal/termtext"
)

// DeniedError is a request the repository refused to authorize (ErrDenied), as the calls
// that read its index or archives return it, with what the advice on it needs: where the
// credential the repository was given came from (Options.CredentialFrom; without one of
// its own and of its URL, the netrc entry of its host that was sent, "machine HOST in
// FILE" or "the default entry of FILE"; "" for none), whether, without one of its own,
// its URL's user information was sent, the variables one is looked for in
// (Options.CredentialVars), and which repository it is.
type DeniedError struct {
	Err        error
	Credential string
	URL        bool
	Vars       []string
	Repo       string // its name (Options.Repo), "" where not known
	Location   string // its location, without user information

	netrc     string   // the netrc file its requests read (Options.Netrc), "" for none
	locs      []string // its location and mirrors, as given
	cleartext bool     // Options.CleartextCredentials
}

func (e *DeniedError) Error() string { return e.Err.Error() }
func (e *DeniedError) Unwrap() error { return e.Err }

// refusal is what a *DeniedError of the repository at locs, its location and mirrors,
// authenticated with o, says of the credential it was given; its Err is not set.
func refusal(o Options, locs ...string) DeniedError {
	d := DeniedError{Credential: o.CredentialFrom, Vars: o.CredentialVars, Repo: o.Repo, netrc: o.Netrc, locs: locs, cleartext: o.CleartextCredentials}
	if len(locs) > 0 {
		d.Location = termtext.WithoutCredentials(locs[0])
	}
	for _, l := range locs {
		u, err := url.Parse(l)
		d.URL = d.URL || err == nil && u.User != nil && o.Credential.IsZero()
	}
	return d
}

// denied returns err as a *DeniedError, as d says, where it is ErrDenied and not one
// already.
func (d DeniedError) denied(err error) error {
	var de *DeniedError
	if err == nil || !errors.Is(err, ErrDenied) || errors.As(err, &de) {
		return err
	}
	d.Err = err
	if d.Credential == "" && !d.URL {
		d.Credential = d.netrcEntry()
	}
	return &d
}

// netrcEntry names the netrc entry that d's requests sent, where they had no credential
// of the repository's own or of its URL: the machine of the first of its hosts that has
// one, else the default entry, which goes in plain http only to this machine (or with
// Options.CleartextCredentials); "" for none. The file was read by the request refused.
func (d DeniedError) netrcEntry() string {
	if d.netrc == "" {
		return ""
	}
	n, err := readNetrc(d.netrc)
	if err != nil || n == nil {
		return ""
	}
	var def string
	for _, l := range d.locs {
		u, err := url.Parse(l)
		if err != nil || u.Host == "" {
			continue
		}
		switch _, from := n.credential(u.Hostname()); {
		case from == fromNetrc:
			return fmt.Sprintf("machine %s in %s", termtext.Printable(u.Hostname()), termtext.Printable(d.netrc))
		case from == fromDefault && def == "" && (d.cleartext || loopback(u.Hostname()) || u.Scheme != "http" && u.Scheme != "oci+http"):
			def = "the default entry of " + termtext.Printable(d.netrc)
		}
	}
	return def
}

// denied returns err as a *DeniedError where it is ErrDenied and not one already.
func (s *Source) denied(err error) error { return s.refusal.denied(err) }
