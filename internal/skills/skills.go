// Package skills serves MCP skills: the Skills extension
// (io.modelcontextprotocol/skills, SEP-2640, specified against 2026-07-28;
// github.com/modelcontextprotocol/ext-skills, specification/stable/skills.mdx).
//
// A skill is a directory of files with a SKILL.md at its root whose YAML
// frontmatter has at least name and description. Each file is a resource
// skill://<skill-path>/<file-path>; skills/list and skills/get answer
// entries carrying the verbatim frontmatter and every file's SHA-256 digest
// and size.
//
// isogate serves two kinds: its own, from [Source]s (saved programs, say:
// see [ProgramSkill]), under skill://isogate/...; and its backends'
// (those that declare the extension), each under a path prefix naming the
// backend, skill://<backend>/..., so that two backends' skill://refunds
// never collide, as the extension requires of hosts. Files are served
// byte for byte, so digests still verify after the prefix is added.
package skills

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/isogate/isogate/internal/authn"
)

// Extension is the identifier of the Skills extension, the key under
// capabilities.extensions.
const Extension = "io.modelcontextprotocol/skills"

// Scheme starts a skill file's URI.
const Scheme = "skill://"

// OwnAuthority is the first segment of the skill paths of isogate's own
// skills (from [Source]s): skill://isogate/<skill-path>/<file>. A backend
// of that name has its skills left out (see [Service]).
const OwnAuthority = "isogate"

// SkillFile is the name of a skill's required root file.
const SkillFile = "SKILL.md"

// Limits the extension fixes per skill: a host must accept skills up to
// them, and a server should not serve larger ones.
const (
	// MaxFiles bounds the files of one skill, SKILL.md included.
	MaxFiles = 512
	// MaxBytes bounds the total size of one skill's files.
	MaxBytes = 16 << 20
)

// A Source serves some of isogate's own skills: those principal may see
// (principal is nil when the caller has none, without authentication).
// An error is the source's failure (its store unreachable): the request
// is refused rather than answered without the source's skills.
type Source interface {
	Skills(ctx context.Context, principal *authn.Principal) ([]Skill, error)
}

// SourceFunc is a [Source] that is a function.
type SourceFunc func(ctx context.Context, principal *authn.Principal) ([]Skill, error)

// Skills implements [Source].
func (f SourceFunc) Skills(ctx context.Context, p *authn.Principal) ([]Skill, error) {
	return f(ctx, p)
}

// Skill is one skill as a [Source] serves it.
type Skill struct {
	// Path locates the skill below isogate's own authority, "/"-separated;
	// its last segment is the skill's name ("programs/refunds" is served
	// as skill://isogate/programs/refunds/SKILL.md).
	Path string
	// Files are the skill's files, SKILL.md among them.
	Files []File
}

// File is one file of a skill.
type File struct {
	// Path is the file's path relative to the skill's root ("SKILL.md",
	// "program.ts", "references/GUIDE.md").
	Path string
	// MIMEType is the file's media type; empty: from its extension
	// (text/markdown for SKILL.md).
	MIMEType string
	// Content is the file's raw bytes, which its digest covers.
	Content []byte
}

// mimeType is the file's media type.
func (f File) mimeType() string {
	if f.MIMEType != "" {
		return f.MIMEType
	}
	switch path.Ext(f.Path) {
	case ".md":
		return "text/markdown"
	case ".ts":
		return "text/typescript"
	case ".js", ".mjs":
		return "text/javascript"
	case ".json":
		return "application/json"
	}
	if t := mime.TypeByExtension(path.Ext(f.Path)); t != "" {
		return t
	}
	if utf8.Valid(f.Content) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// Digest is a file's digest as entries carry it: "sha256:" and 64
// lower-case hexadecimal digits of the SHA-256 of content.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// nameRE is the Agent Skills rule for a skill's name: lower-case letters,
// digits and hyphens, at most 64, no hyphen first, last or twice in a row.
var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports whether name satisfies the Agent Skills naming rules.
func ValidName(name string) bool { return len(name) <= 64 && nameRE.MatchString(name) }

// Frontmatter parses the YAML frontmatter at the start of a SKILL.md into
// the JSON object an entry carries verbatim; name and description must be
// present and non-empty strings.
func Frontmatter(skillMD []byte) (map[string]any, error) {
	text := skillMD
	if !bytes.HasPrefix(text, []byte("---\n")) && !bytes.HasPrefix(text, []byte("---\r\n")) {
		return nil, errors.New("SKILL.md does not begin with YAML frontmatter (---)")
	}
	text = text[bytes.IndexByte(text, '\n')+1:]
	var block []byte
	for rest := text; ; {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if string(bytes.TrimRight(line, "\r")) == "---" {
			block = text[:len(text)-len(rest)]
			break
		}
		if !found {
			return nil, errors.New("SKILL.md's frontmatter has no closing ---")
		}
		rest = after
	}
	var fm map[string]any
	if err := yaml.Unmarshal(block, &fm); err != nil {
		return nil, fmt.Errorf("SKILL.md's frontmatter: %w", err)
	}
	// Through JSON, so that the value is what the wire carries (YAML
	// integers, dates and nested maps as JSON has them).
	raw, err := json.Marshal(fm)
	if err != nil {
		return nil, fmt.Errorf("SKILL.md's frontmatter as JSON: %w", err)
	}
	fm = nil
	if err := json.Unmarshal(raw, &fm); err != nil {
		return nil, fmt.Errorf("SKILL.md's frontmatter as JSON: %w", err)
	}
	for _, k := range []string{"name", "description"} {
		if s, ok := fm[k].(string); !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("SKILL.md's frontmatter has no %s", k)
		}
	}
	return fm, nil
}

// checked is a source's skill made ready to serve: its entry and its
// files by URI.
type checked struct {
	entry Entry
	name  string
	desc  string
	files map[string]File // URI → file
	order []string        // file URIs, SKILL.md first
}

// check validates s (a SKILL.md with frontmatter whose name is the last
// path segment; relative, clean file paths; the extension's limits) and
// builds its entry under skill://isogate/.
func check(s Skill) (*checked, error) {
	p := strings.Trim(s.Path, "/")
	if p == "" || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." {
		return nil, fmt.Errorf("skill path %q is not a clean relative path", s.Path)
	}
	name := path.Base(p)
	if !ValidName(name) {
		return nil, fmt.Errorf("skill path %q: %q is not a valid skill name (lower-case letters, digits, hyphens)", s.Path, name)
	}
	if len(s.Files) > MaxFiles {
		return nil, fmt.Errorf("skill %q has %d files, more than %d", p, len(s.Files), MaxFiles)
	}
	root := Scheme + OwnAuthority + "/" + p + "/"
	c := &checked{name: name, files: map[string]File{}}
	c.entry.URI = root + SkillFile
	total := 0
	var md *File
	for i := range s.Files {
		f := s.Files[i]
		if f.Path == "" || path.Clean(f.Path) != f.Path || strings.HasPrefix(f.Path, "/") || strings.HasPrefix(f.Path, "../") || f.Path == ".." {
			return nil, fmt.Errorf("skill %q: file path %q is not a clean relative path", p, f.Path)
		}
		uri := root + f.Path
		if _, dup := c.files[uri]; dup {
			return nil, fmt.Errorf("skill %q: file %q twice", p, f.Path)
		}
		total += len(f.Content)
		c.files[uri] = f
		if f.Path == SkillFile {
			md = &s.Files[i]
			c.order = append([]string{uri}, c.order...)
		} else {
			c.order = append(c.order, uri)
		}
	}
	if total > MaxBytes {
		return nil, fmt.Errorf("skill %q has %d bytes of files, more than %d", p, total, MaxBytes)
	}
	if md == nil {
		return nil, fmt.Errorf("skill %q has no %s", p, SkillFile)
	}
	fm, err := Frontmatter(md.Content)
	if err != nil {
		return nil, fmt.Errorf("skill %q: %w", p, err)
	}
	if fm["name"] != name {
		return nil, fmt.Errorf("skill %q: frontmatter name %q is not the path's last segment", p, fm["name"])
	}
	c.desc, _ = fm["description"].(string)
	if c.entry.Frontmatter, err = json.Marshal(fm); err != nil {
		return nil, fmt.Errorf("skill %q: %w", p, err)
	}
	for _, uri := range c.order {
		content := c.files[uri].Content
		c.entry.Resources.Files = append(c.entry.Resources.Files, Resource{URI: uri, Digest: Digest(content), Size: int64(len(content))})
	}
	return c, nil
}
