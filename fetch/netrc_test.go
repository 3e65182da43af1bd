package fetch

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseNetrc(t *testing.T) {
	text := `# pkg's test netrc
machine Files.Example.com login alice password "pa ss\"word"
machine files.example.com login second password ignored
macdef init
cd /pub
machine not-a-machine

machine tok.example   login   x
  password	t0k  account acct
default login anonymous password guest@
`
	n, line, err := parseNetrc(text)
	if err != nil {
		t.Fatalf("line %d: %v", line, err)
	}
	for _, tc := range []struct {
		host string
		want Credential
		from credSource
	}{
		{"files.example.com", Credential{Username: "alice", Password: `pa ss"word`}, fromNetrc},
		{"FILES.example.com", Credential{Username: "alice", Password: `pa ss"word`}, fromNetrc},
		{"tok.example", Credential{Username: "x", Password: "t0k"}, fromNetrc},
		{"not-a-machine", Credential{Username: "anonymous", Password: "guest@"}, fromDefault},
		{"other", Credential{Username: "anonymous", Password: "guest@"}, fromDefault},
	} {
		got, from := n.credential(tc.host)
		if got != tc.want || from != tc.from {
			t.Errorf("%s: %#v from %d, want %+v from %d", tc.host, got.Username+":"+got.Password, from, tc.want.Username, tc.from)
		}
	}
}

func TestParseNetrcErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
	}{
		{"machine a login", 1},
		{"login a", 1},
		{"machine a\npassword \"open", 2},
		{"machine a\n\nport 21", 3},
		{"default\ndefault", 2},
		{"machine a password \"x\ny\"", 1},
		{"machine a login u password two words", 1},
	} {
		_, line, err := parseNetrc(tc.text)
		if err == nil || line != tc.line {
			t.Errorf("%q: line %d: %v, want an error at line %d", tc.text, line, err, tc.line)
		}
		if err != nil && (strings.Contains(err.Error(), "open") || strings.Contains(err.Error(), "\"x") || strings.Contains(err.Error(), "words")) {
			t.Errorf("%q: the error quotes a value: %v", tc.text, err)
		}
	}
}

// TestNetrcMode refuses passwords in a netrc file other users can read, and takes the
// same file without passwords.
func TestNetrcMode(t *testing.T) {
	for _, tc := range []struct {
		text string
		mode os.FileMode
		ok   bool
	}{
		{"machine a login u password p", 0o600, true},
		{"machine a login u password p", 0o400, true},
		{"machine a login u password p", 0o644, false},
		{"machine a login u password p", 0o620, false},
		{"default login u password p", 0o604, false},
		{"machine a login u", 0o644, true},
	} {
		name := writeNetrc(t, tc.text)
		if err := os.Chmod(name, tc.mode); err != nil {
			t.Fatal(err)
		}
		_, err := readNetrc(name)
		ne := (*NetrcError)(nil)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%q, mode %o: %v", tc.text, tc.mode, err)
		case !tc.ok && (!errors.Is(err, ErrNetrcOpen) || !errors.As(err, &ne) || ne.File != name):
			t.Errorf("%q, mode %o: %v, want a *NetrcError of ErrNetrcOpen", tc.text, tc.mode, err)
		}
	}
	if _, err := readNetrc(writeNetrc(t, "") + ".absent"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an absent netrc: %v, want ErrNotExist", err)
	}
}

func FuzzParseNetrc(f *testing.F) {
	f.Add("machine a login b password c\ndefault login d password e")
	f.Add("macdef x\nline\n\nmachine \"q\\\"\" login \"\"")
	f.Fuzz(func(t *testing.T, text string) {
		n, _, err := parseNetrc(text)
		if err == nil {
			n.credential("a")
		}
	})
}
