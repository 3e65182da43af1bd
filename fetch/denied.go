package fetch

import "errors"

// DeniedError is a request the repository refused to authorize (ErrDenied), as the calls
// that read its index or archives return it, with what the advice on it needs: where the
// credential the repository was given came from ("" for none: a netrc entry or a URL's
// user information may still have been sent) and the variables one is looked for in
// (Options.CredentialFrom, Options.CredentialVars).
type DeniedError struct {
	Err        error
	Credential string
	Vars       []string
}

func (e *DeniedError) Error() string { return e.Err.Error() }
func (e *DeniedError) Unwrap() error { return e.Err }

// denied returns err as a *DeniedError where it is ErrDenied and not one already.
func (s *Source) denied(err error) error {
	var de *DeniedError
	if err == nil || !errors.Is(err, ErrDenied) || errors.As(err, &de) {
		return err
	}
	return &DeniedError{Err: err, Credential: s.credFrom, Vars: s.credVars}
}
