package lexicon

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"sync"
)

//go:generate go run ./gen -foldoc /usr/share/dictd/foldoc.dict.dz -out foldoc.gz

//go:embed foldoc.gz
var foldocGz []byte

var (
	foldocOnce sync.Once
	foldoc     map[string][]string
	foldocErr  error
)

// Near returns the stems (see [Stem]) that the Free On-line Dictionary of
// Computing gives one entry with a stem ("folder" and "directory", "image"
// and "picture"), nil for a stem it relates to none: computing words that
// WordNet does not relate. The slice must not be modified.
func Near(stem string) []string {
	foldocOnce.Do(func() { foldoc, foldocErr = parseNear(foldocGz) })
	return foldoc[stem]
}

// NearError reports whether the embedded FOLDOC table failed to load (it
// is then empty): a broken build, not a run-time condition.
func NearError() error {
	Near("")
	return foldocErr
}

// parseNear reads the gzip-compressed "stem other other …" table.
func parseNear(gz []byte) (map[string][]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return map[string][]string{}, fmt.Errorf("foldoc table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return map[string][]string{}, fmt.Errorf("foldoc table: %w", err)
	}
	t := map[string][]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		t[f[0]] = f[1:len(f):len(f)]
	}
	return t, nil
}
