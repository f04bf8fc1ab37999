package output

import (
	"fmt"
	"strings"
)

// Key-path summary limits.
const (
	// maxKeyPathDepth bounds the depth (keys and array levels) of the
	// key-path summary; deeper containers are marked "…".
	maxKeyPathDepth = 6
	// maxSummaryLines caps the lines of a key-path summary.
	maxSummaryLines = 150
	// maxShapeKeys caps the distinct keys tracked per object shape.
	maxShapeKeys = 200
	// scalarPreviewClip shortens scalar values shown in a key-path summary.
	scalarPreviewClip = 60
)

// shape merges the values found at one key path (e.g. the "id" of every
// item of an array) so the summary lists each path once.
type shape struct {
	n         int   // values merged
	kinds     uint8 // bitmask of 1<<jkind
	one       *jval // the value, while n == 1
	nObj      int   // objects merged
	maxKeys   int   // most keys seen in one object
	keys      []string
	kids      map[string]*shape
	extra     map[string]bool // keys beyond maxShapeKeys
	nArr      int             // arrays merged
	minLen    int
	maxLen    int
	elem      *shape // merged array items (nil at the depth limit)
	elemKinds uint8  // kinds of array items, tracked even at the depth limit
}

func (s *shape) add(v *jval, depth int) {
	s.n++
	s.kinds |= 1 << v.kind
	s.one = nil
	if s.n == 1 {
		s.one = v
	}
	switch v.kind {
	case kObject:
		s.nObj++
		s.maxKeys = max(s.maxKeys, len(v.keys))
		if depth >= maxKeyPathDepth {
			return
		}
		if s.kids == nil {
			s.kids = map[string]*shape{}
		}
		for i, k := range v.keys {
			c := s.kids[k]
			if c == nil {
				if len(s.keys) >= maxShapeKeys {
					if s.extra == nil {
						s.extra = map[string]bool{}
					}
					s.extra[k] = true
					continue
				}
				c = &shape{}
				s.kids[k] = c
				s.keys = append(s.keys, k)
			}
			c.add(v.vals[i], depth+1)
		}
	case kArray:
		if s.nArr == 0 || len(v.vals) < s.minLen {
			s.minLen = len(v.vals)
		}
		s.maxLen = max(s.maxLen, len(v.vals))
		s.nArr++
		for _, it := range v.vals {
			s.elemKinds |= 1 << it.kind
		}
		if depth >= maxKeyPathDepth {
			return
		}
		if s.elem == nil {
			s.elem = &shape{}
		}
		for _, it := range v.vals {
			s.elem.add(it, depth+1)
		}
	}
}

// kindLabel names the kinds in mask, e.g. "object" or "string|null".
func kindLabel(mask uint8) string {
	var names []string
	for _, k := range []jkind{kObject, kArray, kString, kNumber, kBool, kNull} {
		if mask&(1<<k) != 0 {
			names = append(names, k.String())
		}
	}
	return strings.Join(names, "|")
}

// pathLines collects summary lines up to maxSummaryLines.
type pathLines struct {
	lines   []string
	dropped int
}

func (w *pathLines) add(s string) {
	if len(w.lines) >= maxSummaryLines {
		w.dropped++
		return
	}
	w.lines = append(w.lines, s)
}

func joinPath(prefix, seg string) string {
	if prefix == "" {
		return seg
	}
	return prefix + " > " + seg
}

// print writes the line(s) for the values at path; parentN is how many
// parent objects could have had this key (0 at the top).
func (s *shape) print(w *pathLines, path string, parentN int) {
	presence := ""
	if parentN > 0 && s.n < parentN {
		presence = fmt.Sprintf(", in %d of %d", s.n, parentN)
	}
	isObj := s.kinds&(1<<kObject) != 0
	isArr := s.kinds&(1<<kArray) != 0
	switch {
	case isObj:
		desc := kindLabel(s.kinds)
		if s.one != nil {
			desc += fmt.Sprintf(", %s, %s", count(len(s.one.keys), "key"), fmtSize(s.one.size))
		} else {
			desc += ", up to " + count(s.maxKeys, "key")
		}
		line := path + " (" + desc + presence + ")"
		if s.kids == nil && s.maxKeys > 0 {
			line += " …"
		}
		w.add(line)
		s.printKids(w, path)
		if isArr {
			s.printArray(w, path, "")
		}
	case isArr:
		s.printArray(w, path, presence)
	default:
		line := path + " (" + kindLabel(s.kinds) + presence + ")"
		if s.one != nil {
			line += " = " + s.one.compact(scalarPreviewClip)
		}
		w.add(line)
	}
}

func (s *shape) printKids(w *pathLines, prefix string) {
	for _, k := range s.keys {
		s.kids[k].print(w, joinPath(prefix, dispKey(k)), s.nObj)
	}
	if len(s.extra) > 0 {
		w.add(joinPath(prefix, fmt.Sprintf("… (%d more keys)", len(s.extra))))
	}
}

// printArray writes "path > [0-4] (object, 5 items, 1.2KB)" and the lines
// of the items' merged shape below it.
func (s *shape) printArray(w *pathLines, path, presence string) {
	if s.maxLen == 0 {
		w.add(joinPath(path, "[]") + " (empty array" + presence + ")")
		return
	}
	var rng, size string
	if s.nArr == 1 {
		rng = fmt.Sprintf("[0-%d]", s.maxLen-1)
		if s.maxLen == 1 {
			rng = "[0]"
		}
		size = count(s.maxLen, "item")
	} else {
		rng = "[*]"
		if s.minLen == s.maxLen {
			size = count(s.maxLen, "item") + " each"
		} else {
			size = fmt.Sprintf("%d-%d items each", s.minLen, s.maxLen)
		}
	}
	desc := kindLabel(s.elemKinds) + ", " + size
	if s.one != nil {
		desc += ", " + fmtSize(s.one.size)
	}
	if other := s.kinds &^ (1 << kArray); other != 0 && s.kinds&(1<<kObject) == 0 {
		desc += "; or " + kindLabel(other)
	}
	p := joinPath(path, rng)
	line := p + " (" + desc + presence + ")"
	const containers = 1<<kObject | 1<<kArray
	if s.elem == nil && s.elemKinds&containers != 0 {
		line += " …"
	}
	w.add(line)
	if e := s.elem; e != nil {
		if e.kinds&(1<<kObject) != 0 {
			e.printKids(w, p)
		}
		if e.kinds&(1<<kArray) != 0 {
			e.printArray(w, p, "")
		}
	}
}

// writeKeyPathSummary describes any JSON document as key paths with types
// and sizes, depth-limited. It returns an example part path.
func writeKeyPathSummary(b *strings.Builder, doc *jval, bodyLen int) []string {
	root := &shape{}
	root.add(doc, 0)
	w := &pathLines{}
	if doc.kind == kArray {
		fmt.Fprintf(b, "[JSON summary (%s): array of %s; key paths with types and sizes]\n", fmtKB(bodyLen), count(len(doc.vals), "item"))
		root.printArray(w, "", "")
	} else {
		fmt.Fprintf(b, "[JSON summary (%s): object with %s; key paths with types and sizes]\n", fmtKB(bodyLen), count(len(doc.keys), "key"))
		root.printKids(w, "")
	}
	for _, l := range w.lines {
		b.WriteString(l + "\n")
	}
	if w.dropped > 0 {
		fmt.Fprintf(b, "… (%d more key paths)\n", w.dropped)
	}
	if p, ok := examplePath(doc, 0); ok {
		return p
	}
	if len(doc.keys) > 0 {
		return doc.keys[:1]
	}
	return []string{"0"}
}

// examplePath finds a short path to the first item of some array.
func examplePath(v *jval, depth int) ([]string, bool) {
	if v.kind == kArray && len(v.vals) > 0 {
		return []string{"0"}, true
	}
	if v.kind == kObject && depth < 4 {
		for i, c := range v.vals {
			if p, ok := examplePath(c, depth+1); ok {
				return append([]string{v.keys[i]}, p...), true
			}
		}
	}
	return nil, false
}
