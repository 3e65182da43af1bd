package fetch

import (
	"errors"
	"net/url"

	"pkg/internal/termtext"
)

// DeniedError is a request the repository refused to authorize (ErrDenied), as the calls
// that read its index or archives return it, with what the advice on it needs: where the
// credential the repository was given came from ("" for none of its own: a netrc entry or
// a URL's user information may still have been sent), whether, without one of its own,
// its URL's user information was sent, the variables one is looked for in
// (Options.CredentialFrom, Options.CredentialVars), and which repository it is.
type DeniedError struct {
	Err        error
	Credential string
	URL        bool
	Vars       []string
	Repo       string // its name (Options.Repo), "" where not known
	Location   string // its location, without user information
}

func (e *DeniedError) Error() string { return e.Err.Error() }
func (e *DeniedError) Unwrap() error { return e.Err }

// refusal is what a *DeniedError of the repository at locs, its location and mirrors,
// authenticated with o, says of the credential it was given; its Err is not set.
func refusal(o Options, locs ...string) DeniedError {
	d := DeniedError{Credential: o.CredentialFrom, Vars: o.CredentialVars, Repo: o.Repo}
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
	return &d
}

// denied returns err as a *DeniedError where it is ErrDenied and not one already.
func (s *Source) denied(err error) error { return s.refusal.denied(err) }
