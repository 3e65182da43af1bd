package db

import (
	"path/filepath"
	"testing"
)

// TestSaidState records, replaces, reopens and forgets what the user was told of a condition.
func TestSaidState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	d := open(t, path)
	const key = "index https://example.com/repo/"
	if got, err := d.SaidState(key); got != "" || err != nil {
		t.Fatalf("Said of an empty database: %q, %v", got, err)
	}
	for _, state := range []string{"unsigned", "signed by 0011223344556677"} {
		if err := d.PutSaid(key, state); err != nil {
			t.Fatal(err)
		}
	}
	d = open(t, path)
	if got, err := d.SaidState(key); got != "signed by 0011223344556677" || err != nil {
		t.Errorf("Said after reopening = %q, %v", got, err)
	}
	if got, _ := d.SaidState("copy"); got != "" {
		t.Errorf("Said of another key = %q", got)
	}
	if err := d.PutSaid(key, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := d.SaidState(key); got != "" || err != nil {
		t.Errorf("Said after the condition ended = %q, %v", got, err)
	}
}
