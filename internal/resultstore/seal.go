package resultstore

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// sealPrefix starts a sealed value: "isogate-hmac1:" + hex MAC + "\n".
const sealPrefix = "isogate-hmac1:"

// ErrTampered means a value read from a shared store does not carry a
// valid MAC under the configured key (store.hmac_key): it was not written
// by a gateway holding the key, or was changed since. It is refused.
var ErrTampered = errors.New("entry failed its integrity check (store.hmac_key): refused")

// Seal returns data with an HMAC-SHA256 under key over name (where the
// value is stored: a key, an id and its owner) and data, so that a value
// planted in or moved within the store is refused by [Unseal]. With an
// empty key data is returned as it is.
func Seal(key []byte, name string, data []byte) []byte {
	if len(key) == 0 {
		return data
	}
	out := make([]byte, 0, len(sealPrefix)+2*sha256.Size+1+len(data))
	out = append(out, sealPrefix...)
	out = hex.AppendEncode(out, mac(key, name, data))
	out = append(out, '\n')
	return append(out, data...)
}

// Unseal checks a value [Seal] wrote under name and returns its data; with
// an empty key sealed is returned as it is. A value without a valid MAC is
// [ErrTampered].
func Unseal(key []byte, name string, sealed []byte) ([]byte, error) {
	if len(key) == 0 {
		return sealed, nil
	}
	rest, ok := bytes.CutPrefix(sealed, []byte(sealPrefix))
	sum, data, ok2 := bytes.Cut(rest, []byte("\n"))
	if !ok || !ok2 {
		return nil, fmt.Errorf("%s: %w", name, ErrTampered)
	}
	got := make([]byte, sha256.Size)
	if n, err := hex.Decode(got, sum); err != nil || n != sha256.Size || !hmac.Equal(got, mac(key, name, data)) {
		return nil, fmt.Errorf("%s: %w", name, ErrTampered)
	}
	return data, nil
}

func mac(key []byte, name string, data []byte) []byte {
	h := hmac.New(sha256.New, key)
	fmt.Fprintf(h, "%d:%s", len(name), name)
	h.Write(data)
	return h.Sum(nil)
}
