package lexicon

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run ./gen -wordnet /usr/share/wordnet -out wordnet.gz

// TableSenses is how many senses of a word, most frequent first, the
// table keeps (with their direct hypernyms): the rarer senses of common
// words relate them to unrelated ones ("file" the tool, "file" the line).
const TableSenses = 3

//go:embed wordnet.gz
var tableGz []byte

var (
	tableOnce sync.Once
	table     map[string]Related
	tableErr  error
)

// Related is how a stem relates to WordNet's concepts (numbers).
type Related struct {
	// Own are the concepts of the most frequent senses of the words the
	// stem comes from: two stems sharing one are synonyms.
	Own []uint32
	// Hyper are the direct hypernyms of those senses: a stem whose Own
	// concept is in another's Hyper names a kind of it ("user" is a kind of
	// "person").
	Hyper []uint32
}

// Concepts returns how a stem (see [Stem]) relates to WordNet's concepts,
// the zero Related for a stem WordNet relates to no other. Only concepts
// that relate two stems are kept. The slices must not be modified.
func Concepts(stem string) Related {
	tableOnce.Do(func() { table, tableErr = parseTable(tableGz) })
	return table[stem]
}

// TableError reports whether the embedded table failed to load (it is
// then empty): a broken build, not a run-time condition.
func TableError() error {
	Concepts("")
	return tableErr
}

// parseTable reads the gzip-compressed "stem own… / hyper…" table.
func parseTable(gz []byte) (map[string]Related, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("lexicon table: %w", err)
	}
	m := map[string]Related{}
	sc := bufio.NewScanner(zr)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		var r Related
		dst := &r.Own
		for _, s := range f[1:] {
			if s == "/" {
				dst = &r.Hyper
				continue
			}
			id, err := strconv.ParseUint(s, 36, 32)
			if err != nil {
				return nil, fmt.Errorf("lexicon table line %d: %w", n, err)
			}
			*dst = append(*dst, uint32(id))
		}
		m[f[0]] = r
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lexicon table: %w", err)
	}
	return m, nil
}
