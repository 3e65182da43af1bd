package pin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"pkg/install"
	"pkg/pin"
	"pkg/trust"
)

// A root records the signed index it accepts and refuses, under its lock, one that
// would roll the repository back.
func ExampleAccept() {
	base, err := os.MkdirTemp("", "pin-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	root, err := install.Open(context.Background(), filepath.Join(base, "root"), install.Options{NoSync: true})
	if err != nil {
		panic(err)
	}
	defer root.Close()
	k, err := trust.GenerateKey()
	if err != nil {
		panic(err)
	}
	key := k.Public()
	index := func(version uint64, sha string) trust.Result {
		return trust.Result{Record: trust.Record{Location: "https://example.com/r/", Name: "r", Version: version, SHA256: sha},
			KeyID: key.ID(), KeyIDs: []string{key.ID()}, Keys: []trust.PublicKey{key}, Trusted: []string{key.ID()}}
	}
	fmt.Println(pin.Accept(root.DB(), index(2, "b")))
	err = pin.Accept(root.DB(), index(1, "a"))
	fmt.Println(errors.Is(err, trust.ErrRollback))
	all, _ := root.DB().Repos()
	pins := pin.Set(all)
	p := pins.At("https://example.com/r/")
	fmt.Println(p.Name, p.Version, p.KeyID == key.ID())
	// Output:
	// <nil>
	// true
	// r 2 true
}
