package programs

import (
	"strconv"

	"github.com/isogate/isogate/internal/textcut"
)

// maxQuoted bounds the bytes of user text (a name, a reference, an
// action) an error quotes: a 3 MiB name must not give a 3 MiB error.
const maxQuoted = 80

// Quote is s as an error quotes it: Go-quoted, cut to at most maxQuoted
// bytes of s followed by "…" when longer.
func Quote(s string) string {
	return strconv.Quote(textcut.Clip(s, maxQuoted, "…"))
}
