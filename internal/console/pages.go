package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/surface"
	"github.com/isogate/isogate/internal/textcut"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// pageNames are the console's pages, in menu order.
var pageNames = []string{"overview", "tools", "runs", "approvals", "audit", "metrics"}

// pages are the parsed templates: one set per page, each with the layout.
type pages struct{ sets map[string]*template.Template }

var funcs = template.FuncMap{
	"visible": visible,
	"since":   func(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() },
	"clock":   func(t time.Time) string { return t.Format("15:04:05") },
	"stamp":   func(t time.Time) string { return t.Format("2006-01-02 15:04:05.000 MST") },
	"pretty":  prettyArgs,
}

func parsePages() *pages {
	p := &pages{sets: map[string]*template.Template{}}
	for _, name := range append(slices.Clone(pageNames), "record", "login", "refused") {
		p.sets[name] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(files, "templates/layout.html", "templates/"+name+".html"))
	}
	return p
}

// render writes the whole page name.
func (p *pages) render(w io.Writer, name string, data any) error {
	return p.sets[name].ExecuteTemplate(w, "layout.html", data)
}

// renderLive writes the live part of page name (what events refresh).
func (p *pages) renderLive(w io.Writer, name string, data any) error {
	return p.sets[name].ExecuteTemplate(w, "live", data)
}

// view is what every page template gets.
type view struct {
	Page      string
	Principal string
	CSRF      string
	Query     string // the page's query string, for its event stream
	Data      any
}

// page serves the page name.
func (c *Console) page(name string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, v *visitor) {
		data, err := c.gather(name, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := c.pages.render(w, name, c.view(name, r, v, data)); err != nil {
			c.logger.Warn("console: rendering a page", "page", name, "error", err)
		}
	}
}

func (c *Console) view(name string, r *http.Request, v *visitor, data any) view {
	return view{Page: name, Principal: v.Principal, CSRF: v.CSRF, Query: r.URL.RawQuery, Data: data}
}

// gather collects the data of page name for r.
func (c *Console) gather(name string, r *http.Request) (any, error) {
	q := r.URL.Query()
	switch name {
	case "overview":
		return c.overview(), nil
	case "tools":
		return c.tools(q.Get("q"), q.Get("name")), nil
	case "runs":
		return c.runs(q), nil
	case "record":
		if rec, ok := c.src.Desk.RecordOf(q.Get("id")); ok {
			d := recordView(rec)
			d.CanReplay, d.Replay = c.src.Replay != nil, c.replays.of(rec.Run.ID)
			return d, nil
		}
		if run, ok := c.src.Desk.LiveRun(q.Get("id")); ok {
			return liveView(run), nil
		}
		return nil, fmt.Errorf("no recent run record %q", q.Get("id"))
	case "approvals":
		return c.src.Desk.Approvals(), nil
	case "audit":
		f := desk.EventFilter{Principal: q.Get("principal"), Kind: q.Get("kind"), Text: q.Get("text"), Limit: 500}
		return map[string]any{"Filter": f, "Events": c.src.Desk.Events(f)}, nil
	case "metrics":
		series, _ := c.metricsSeries()
		b, err := json.Marshal(series)
		return string(b), err
	}
	return nil, fmt.Errorf("no page %q", name)
}

// backendView is one backend on the overview.
type backendView struct {
	backend.Status
	Healthy bool
	// Lines are its last stderr lines, each marked notice or error.
	Lines []stderrLine
}

type overviewData struct {
	Version, Replica, Uptime string
	Sessions                 int
	Tools                    int
	Backends                 []backendView
	Isolation, V8            string
	// Confinement is what the sandbox workers obtained, layer by layer
	// (as isogate doctor prints it); nil without process isolation.
	Confinement *procpool.Confinement
	// Typecheck is the type checker (sandbox.typecheck on), nil when off.
	Typecheck           *surface.TypecheckReport
	LiveRuns, Approvals int
}

func (c *Console) overview() overviewData {
	d := overviewData{Version: c.opts.Version, Replica: c.opts.Replica, Uptime: time.Since(c.started).Round(time.Second).String(),
		LiveRuns: len(c.src.Desk.Runs()), Approvals: len(c.src.Desk.Approvals())}
	if d.Replica == "" {
		d.Replica, _ = os.Hostname()
	}
	if c.src.Sessions != nil {
		d.Sessions = c.src.Sessions()
	}
	if c.src.Catalog != nil {
		d.Tools = c.src.Catalog.Count()
	}
	if c.src.Backends != nil {
		for _, st := range c.src.Backends() {
			if c.src.Redact != nil {
				lines := make([]string, len(st.Stderr))
				for i, l := range st.Stderr {
					lines[i] = c.src.Redact(st.Name, l)
				}
				st.Stderr = lines
			}
			if n := len(st.Stderr); n > 5 {
				st.Stderr = st.Stderr[n-5:]
			}
			d.Backends = append(d.Backends, backendView{Status: st, Healthy: st.State == backend.StateHealthy, Lines: classify(st.Stderr)})
		}
	}
	if c.src.Sandbox != nil {
		rep := c.src.Sandbox()
		d.Isolation, d.V8 = rep.Isolation, rep.V8Version
		d.Confinement = rep.Confinement
		d.Typecheck = rep.Typecheck
	}
	return d
}

type toolsData struct {
	Query  string
	Result catalog.SearchResult
	Info   *catalog.ToolInfo
	Policy string
	Error  string
	// Denied are the backends' tools the configuration denies (never in
	// the catalogue) that match the query, each with the rule.
	Denied []deniedTool
}

// deniedTool is a tool the configuration denies, and the rule that does.
type deniedTool struct {
	Name, Description, Rule string
}

func (c *Console) tools(query, name string) toolsData {
	d := toolsData{Query: query, Denied: c.deniedTools(query)}
	if c.src.Catalog != nil {
		d.Result = c.src.Catalog.Search(query, catalog.SearchOptions{Limit: catalog.MaxSearchLimit, Brief: true})
	}
	if name == "" {
		return d
	}
	var info *catalog.ToolInfo
	err := errors.New("no tool catalogue")
	if c.src.Catalog != nil {
		info, err = c.src.Catalog.Info(name, catalog.DetailFull)
	}
	if err != nil {
		for _, t := range c.deniedTools("") {
			if t.Name == name {
				d.Policy = "denied by " + t.Rule
				return d
			}
		}
		d.Error = err.Error()
		return d
	}
	d.Info = info
	d.Policy = "allowed"
	if c.src.Policy != nil {
		switch c.src.Policy.Decide(info.Backend, info.Tool) {
		case pipeline.NeedsApproval:
			d.Policy = "every call needs a person's approval"
		case pipeline.Denied: // the catalogue is behind a reload
			rule, pattern := c.src.Policy.DeniedBy(info.Backend, info.Tool)
			d.Policy = "denied by " + catalog.DeniedTool{Rule: rule, Pattern: pattern}.Reason()
		}
	}
	return d
}

// deniedTools lists the backends' tools the configuration denies (the
// catalogue's denied list) whose name or description contains query
// (case-insensitively; all with ""), by name.
func (c *Console) deniedTools(query string) []deniedTool {
	if c.src.Catalog == nil {
		return nil
	}
	q := strings.ToLower(strings.TrimSpace(query))
	var out []deniedTool
	for _, t := range c.src.Catalog.Denied() {
		name := t.Name()
		if q != "" && !strings.Contains(strings.ToLower(name), q) && !strings.Contains(strings.ToLower(t.Description), q) {
			continue
		}
		out = append(out, deniedTool{Name: name, Description: textcut.Clip(t.Description, 200, "…"), Rule: t.Reason()})
	}
	slices.SortFunc(out, func(a, b deniedTool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// visible shows s with every character that could disguise it (bidi
// controls, zero-width and other invisible or control characters) written
// as a \uXXXX escape; line breaks and tabs stay.
func visible(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = pipeline.EscapeForHuman(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// prettyArgs indents JSON arguments (as is when not JSON) and makes every
// invisible character visible.
func prettyArgs(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return visible(string(b))
	}
	return visible(out.String())
}
