package embedsearch

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/isogate/isogate/internal/catalog"
)

// textHash identifies one tool's embedding text.
type textHash = [sha256.Size]byte

// vectorSet is one catalogue version's tool vectors.
type vectorSet struct {
	version uint64           // the catalogue version it serves
	hash    string           // catalogueHash of its texts
	entries []*catalog.Entry // the catalogue's, in its order
	texts   []textHash       // per entry, the hash of its EmbeddingText
	dims    int
	vecs    []float32 // len(entries)*dims, unit vectors
}

// vec is entry i's vector.
func (s *vectorSet) vec(i int) []float32 { return s.vecs[i*s.dims : (i+1)*s.dims] }

// byText maps the set's text hashes to their vectors, for reuse by the
// next catalogue version.
func (s *vectorSet) byText() map[textHash][]float32 {
	if s == nil {
		return nil
	}
	m := make(map[textHash][]float32, len(s.texts))
	for i, h := range s.texts {
		m[h] = s.vec(i)
	}
	return m
}

// catalogueHash is the hash of a catalogue's embedding texts, in order.
func catalogueHash(texts []textHash) string {
	h := sha256.New()
	for _, t := range texts {
		h.Write(t[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// storeKey is where a catalogue's vectors are stored: the model, the
// requested dimensions and the catalogue's hash (a format version first).
func storeKey(model string, dims int, catHash string) string {
	sum := sha256.Sum256([]byte("v1\x00" + model + "\x00" + strconv.Itoa(dims) + "\x00" + catHash))
	return hex.EncodeToString(sum[:16])
}

// blobMagic starts an encoded vector set.
const blobMagic = "isogate-embeddings-1\n"

// encode writes the set's dimensions, count, then per tool its text hash
// and its vector (float32, little-endian).
func (s *vectorSet) encode() []byte {
	n := len(s.texts)
	out := make([]byte, 0, len(blobMagic)+8+n*(sha256.Size+4*s.dims))
	out = append(out, blobMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(s.dims))
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	for i, h := range s.texts {
		out = append(out, h[:]...)
		for _, x := range s.vec(i) {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
	}
	return out
}

// decodeInto reads an encoded set whose texts must be texts, in order;
// anything else is an error (the entry is then recomputed).
func decodeInto(data []byte, texts []textHash) (dims int, vecs []float32, err error) {
	if len(data) < len(blobMagic)+8 || string(data[:len(blobMagic)]) != blobMagic {
		return 0, nil, errors.New("not an isogate embeddings entry")
	}
	data = data[len(blobMagic):]
	dims = int(binary.LittleEndian.Uint32(data))
	n := int(binary.LittleEndian.Uint32(data[4:]))
	data = data[8:]
	if n != len(texts) || dims <= 0 || len(data) != n*(sha256.Size+4*dims) {
		return 0, nil, fmt.Errorf("entry of %d vectors of %d dimensions in %d bytes, want %d tools", n, dims, len(data), len(texts))
	}
	vecs = make([]float32, 0, n*dims)
	for i := range n {
		if textHash(data[:sha256.Size]) != texts[i] {
			return 0, nil, fmt.Errorf("entry's tool %d is another text", i)
		}
		data = data[sha256.Size:]
		for range dims {
			vecs = append(vecs, math.Float32frombits(binary.LittleEndian.Uint32(data)))
			data = data[4:]
		}
	}
	return dims, vecs, nil
}

// randomToken is a lock owner's token.
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
