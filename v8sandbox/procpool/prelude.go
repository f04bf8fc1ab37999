package procpool

import (
	"hash/maphash"
	"strconv"
)

// A job's prelude (trusted JavaScript, tens of KB for code mode) is the same
// for every run of a catalogue version, so it crosses the pipe once per
// worker: a run frame names it by reference, and carries its text only when
// the worker does not hold it yet. Encoding and decoding it in every frame
// cost ~240 µs a run.

// preludeCacheSize is how many preludes a worker holds.
const preludeCacheSize = 16

// preludeSeed makes references unique within this (parent) process; the
// worker treats them as opaque names.
var preludeSeed = maphash.MakeSeed()

// preludeRef names prelude on the wire ("" for no prelude).
func preludeRef(prelude string) string {
	if prelude == "" {
		return ""
	}
	return strconv.FormatUint(maphash.String(preludeSeed, prelude), 36) + "-" + strconv.Itoa(len(prelude))
}

// preludeCache is the set of preludes one worker holds, oldest first. The
// parent keeps one per worker (references only) and the worker keeps one
// (with texts); both add a prelude when a run frame carrying its text
// crosses the pipe, in pipe order, and drop the oldest beyond
// preludeCacheSize, so the two always agree on what the worker holds.
type preludeCache struct {
	order []string
	texts map[string]string
}

// get returns the text held under ref.
func (c *preludeCache) get(ref string) (string, bool) {
	text, ok := c.texts[ref]
	return text, ok
}

// add holds text under ref, dropping the oldest prelude when full.
func (c *preludeCache) add(ref, text string) {
	if c.texts == nil {
		c.texts = map[string]string{}
	}
	if _, ok := c.texts[ref]; ok {
		c.texts[ref] = text
		return
	}
	if len(c.order) == preludeCacheSize {
		delete(c.texts, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, ref)
	c.texts[ref] = text
}
