package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The extension's methods.
const (
	// MethodList enumerates a server's skills.
	MethodList = "skills/list"
	// MethodGet returns one skill's entry by the URI of its SKILL.md.
	MethodGet = "skills/get"
)

// Entry is a skill's entry (the extension's Skill): the URI of its
// SKILL.md, its frontmatter verbatim and its files.
type Entry struct {
	URI string `json:"uri"`
	// Frontmatter is SKILL.md's YAML frontmatter as a JSON object, kept as
	// the server sent it.
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   Resources       `json:"resources"`
}

// Resource is one file of a skill with the digest and size of its bytes.
type Resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Resources are a skill's files: every one of them, or, for a skill whose
// content is generated, the string "dynamic".
type Resources struct {
	Dynamic bool
	Files   []Resource
}

// MarshalJSON implements json.Marshaler.
func (r Resources) MarshalJSON() ([]byte, error) {
	if r.Dynamic {
		return []byte(`"dynamic"`), nil
	}
	if r.Files == nil {
		return []byte(`[]`), nil
	}
	return json.Marshal(r.Files)
}

// UnmarshalJSON implements json.Unmarshaler: an array or "dynamic", and
// nothing else (an entry with anything else must not be loaded).
func (r *Resources) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == `"dynamic"` {
		*r = Resources{Dynamic: true}
		return nil
	}
	if len(b) == 0 || b[0] != '[' {
		return fmt.Errorf("skill resources: %.40s is neither an array nor \"dynamic\"", b)
	}
	*r = Resources{}
	return json.Unmarshal(b, &r.Files)
}

// ListParams are skills/list's parameters.
type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is skills/list's result.
type ListResult struct {
	mcp.ResultBase
	// ResultType is "complete" (required by the extension in every era).
	ResultType string  `json:"resultType"`
	Skills     []Entry `json:"skills"`
	NextCursor string  `json:"nextCursor,omitempty"`
	mcp.Cacheable
}

// GetParams are skills/get's parameters.
type GetParams struct {
	mcp.ParamsBase
	// URI is the URI of the skill's SKILL.md.
	URI string `json:"uri"`
}

// GetResult is skills/get's result.
type GetResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
	Skill      Entry  `json:"skill"`
	mcp.Cacheable
}

// complete is the resultType of every answer of the extension.
const complete = "complete"

// private is the cache scope of isogate's answers: what a caller sees
// depends on its principal.
var private = mcp.Cacheable{CacheScope: "private"}

// AddClientMethods lets sessions of c send skills/list and skills/get
// (with mcp.CallCustomMethod): isogate's connections to its backends.
func AddClientMethods(c *mcp.Client) error {
	return errors.Join(
		mcp.AddSendingCustomMethod[*ListParams, *ListResult](c, MethodList),
		mcp.AddSendingCustomMethod[*GetParams, *GetResult](c, MethodGet))
}

// Declared reports whether a server's initialize result declares the
// extension.
func Declared(ir *mcp.InitializeResult) bool {
	if ir == nil || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[Extension]
	return ok
}
