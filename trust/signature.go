package trust

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// MaxSignatureSize bounds an index.json.sig read from anywhere.
const MaxSignatureSize = 16 << 10 // 16 KiB

// sigMagic starts every line of a signature file of this format.
const sigMagic = "pkg-sig 1"

// signature is one line of a signature file.
type signature struct {
	keyID string
	sig   []byte
}

// Sign returns the contents of index.json.sig for exactly these index bytes: one line
// per key.
func Sign(index []byte, keys ...PrivateKey) []byte {
	var b bytes.Buffer
	for _, k := range keys {
		sig := ed25519.Sign(k.key, index)
		fmt.Fprintf(&b, "%s %s %s\n", sigMagic, k.Public().ID(), base64.StdEncoding.EncodeToString(sig))
	}
	return b.Bytes()
}

// parseSignatures reads a signature file. Lines of a later format ("pkg-sig 2 ...") are
// skipped, so that a publisher may add signatures a newer pkg reads next to these.
func parseSignatures(data []byte) ([]signature, error) {
	if len(data) > MaxSignatureSize {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit", len(data), MaxSignatureSize)
	}
	var sigs []signature
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, " ")
		if len(f) >= 2 && f[0] == "pkg-sig" && f[1] != "1" {
			continue
		}
		s, err := parseSignature(f)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		sigs = append(sigs, s)
	}
	if len(sigs) == 0 {
		return nil, errors.New("no signature of format 1")
	}
	return sigs, nil
}

func parseSignature(f []string) (signature, error) {
	if len(f) != 4 || f[0]+" "+f[1] != sigMagic || len(f[2]) != 16 || strings.Trim(f[2], "0123456789abcdef") != "" {
		return signature{}, fmt.Errorf("not %q, a key id of 16 hex digits and a base64 signature", sigMagic)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(f[3])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return signature{}, fmt.Errorf("signature is not the base64 of %d bytes", ed25519.SignatureSize)
	}
	return signature{keyID: f[2], sig: sig}, nil
}
