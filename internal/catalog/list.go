package catalog

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Page sizes for [Catalog.List].
const (
	// DefaultPageSize is used when List's pageSize is zero or negative.
	DefaultPageSize = 50
	// MaxPageSize caps List's pageSize.
	MaxPageSize = 500
)

// ErrInvalidCursor is returned (wrapped) by [Catalog.List] for a cursor it
// did not produce.
var ErrInvalidCursor = errors.New("invalid cursor")

// cursorPrefix marks cursors produced by List.
const cursorPrefix = "isogate.catalog.v1:"

// List returns one page of tool names ("backend.tool", sorted) starting
// after the position encoded in cursor ("" for the first page), and the
// cursor of the next page ("" after the last page). pageSize defaults to
// DefaultPageSize and is capped at MaxPageSize. Cursors are opaque; they
// encode the last name returned, so paging stays correct while tools are
// added or removed.
func (c *Catalog) List(cursor string, pageSize int) (names []string, nextCursor string, err error) {
	all := c.snap.Load().names
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	pageSize = min(pageSize, MaxPageSize)
	start := 0
	if cursor != "" {
		after, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		start = sort.SearchStrings(all, after)
		if start < len(all) && all[start] == after {
			start++
		}
	}
	end := min(start+pageSize, len(all))
	names = slices.Clone(all[start:end])
	if names == nil {
		names = []string{}
	}
	if end < len(all) {
		nextCursor = encodeCursor(all[end-1])
	}
	return names, nextCursor, nil
}

func encodeCursor(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + last))
}

func decodeCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", fmt.Errorf("%w %q", ErrInvalidCursor, cursor)
	}
	return strings.TrimPrefix(string(b), cursorPrefix), nil
}
