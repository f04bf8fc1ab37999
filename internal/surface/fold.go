package surface

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CollisionGroup is the names of one kind that the same backends share and
// that server.tool_names settled the same way: two filesystem servers share
// fourteen tools, which make one group, reported on one line.
type CollisionGroup struct {
	Kind     string   `json:"kind"`
	Names    []string `json:"names"`
	Backends []string `json:"backends"`
	Winner   string   `json:"winner,omitempty"`
	// first is the group's first collision, whose listed names serve as
	// the example.
	first NameCollision
}

// FoldCollisions groups collisions by kind, backends and winner, keeping
// the order in which each group first appears.
func FoldCollisions(cs []NameCollision) []CollisionGroup {
	var out []CollisionGroup
	index := map[string]int{}
	for _, c := range cs {
		key := strings.Join(append([]string{c.Kind, c.Winner}, c.Backends...), "\x00")
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, CollisionGroup{Kind: c.Kind, Backends: c.Backends, Winner: c.Winner, first: c})
		}
		out[i].Names = append(out[i].Names, c.Name)
	}
	return out
}

// maxFoldedNames bounds the names a folded message spells out.
const maxFoldedNames = 20

// Message tells, on one line, which names the group's backends share and
// how they were settled; a group of one name reads as that collision's
// own message.
func (g CollisionGroup) Message() string {
	if len(g.Names) == 1 {
		return g.first.message()
	}
	var offer, others []string
	for _, b := range g.Backends {
		if b == isogateName && g.Winner == isogateName {
			continue
		}
		offer = append(offer, strconv.Quote(b))
		if b != g.Winner && g.first.Listed[b] != "" {
			others = append(others, fmt.Sprintf("%q", g.first.Listed[b]))
		}
	}
	names := g.Names
	more := ""
	if len(names) > maxFoldedNames {
		names, more = names[:maxFoldedNames], fmt.Sprintf(" and %d more", len(g.Names)-maxFoldedNames)
	}
	what := fmt.Sprintf("%d %ss (%s%s)", len(g.Names), g.Kind, strings.Join(names, ", "), more)
	who := whoOffers(offer)
	example := strings.Join(others, ", ")
	switch g.Winner {
	case isogateName:
		return fmt.Sprintf("%s %s named like isogate's own tools; they are listed prefixed (e.g. %s)", who, what, example)
	case "":
		return fmt.Sprintf("%s %s; each is listed prefixed (e.g. %s)", who, what, example)
	}
	losers := slices.DeleteFunc(slices.Clone(offer), func(b string) bool { return b == strconv.Quote(g.Winner) })
	return fmt.Sprintf("%s %s; %q keeps the names, %s lists them prefixed (e.g. %s)", who, what, g.Winner, strings.Join(losers, " and "), example)
}
