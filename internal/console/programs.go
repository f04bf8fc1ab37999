package console

// The Programs page: every saved program (issue 45), its versions with a
// diff between two, who saved and who published, its calls on this
// replica, stale versions with their diagnostics; making a version
// current and publishing for operators who are admins; and "save as
// program" on a run's page.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/programs"
)

// programRow is one program in the list.
type programRow struct {
	Owner, Name, Description string
	Current, Latest          int
	// Published is the published version (0: none) and its audience.
	Published int
	To        string
	Stale     int
	Calls     int64
	LastCall  time.Time
}

// versionRow is one version of a program.
type versionRow struct {
	*programs.Version
	Current, Published bool
	Called             programs.CallCount
	Stale              *programs.Staleness
}

// diffLine is one line of a diff: Op is " ", "-" (only in A) or "+"
// (only in B).
type diffLine struct{ Op, Text string }

type diffView struct {
	A, B    int
	Lines   []diffLine
	TooLong bool
}

type programDetail struct {
	Owner, Name     string
	Current, Latest int
	Published       *programs.Publication
	Versions        []versionRow
	Diff            *diffView
}

type programsData struct {
	// Admin: the operator may make a version current and publish.
	Admin  bool
	Error  string
	List   []programRow
	Detail *programDetail
}

// programCaller is the operator as the programs package sees them.
func (c *Console) programCaller(v *visitor) programs.Caller {
	admin := c.src.ProgramAdmin != nil && c.src.ProgramAdmin(v.Principal)
	return programs.Caller{Principal: &authn.Principal{Name: v.Principal}, Admin: admin}
}

// programsPage gathers the Programs page: the list, and with owner and
// name one program's versions (with a and b, their diff).
func (c *Console) programsPage(ctx context.Context, q url.Values, v *visitor) programsData {
	p := c.src.Programs
	d := programsData{Admin: c.programCaller(v).Admin}
	if p == nil {
		d.Error = "saved programs are off"
		return d
	}
	heads, err := p.Heads(ctx)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	for _, h := range heads {
		row := programRow{Owner: h.Owner, Name: h.Name, Current: h.Current, Latest: h.Latest, Stale: len(h.Stale)}
		if h.Cur != nil {
			row.Description = h.Cur.Description
		}
		if pub := h.Published; pub != nil {
			row.Published, row.To = pub.Version, strings.Join(pub.To, ", ")
		}
		for _, n := range p.Calls(h.Owner, h.Name) {
			row.Calls += n.Count
			if n.Last.After(row.LastCall) {
				row.LastCall = n.Last
			}
		}
		d.List = append(d.List, row)
	}
	owner, name := q.Get("owner"), q.Get("name")
	if name == "" {
		return d
	}
	head, versions, err := p.Versions(ctx, programs.Caller{Admin: true}, owner, name)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	det := &programDetail{Owner: head.Owner, Name: head.Name, Current: head.Current, Latest: head.Latest, Published: head.Published}
	calls := p.Calls(head.Owner, head.Name)
	byNumber := map[int]*programs.Version{}
	for _, ver := range versions {
		byNumber[ver.Version] = ver
		det.Versions = append(det.Versions, versionRow{Version: ver, Current: ver.Version == head.Current,
			Published: head.Published != nil && head.Published.Version == ver.Version,
			Called:    calls[ver.Version], Stale: head.Stale[ver.Version]})
	}
	a, _ := strconv.Atoi(q.Get("a"))
	b, _ := strconv.Atoi(q.Get("b"))
	if va, vb := byNumber[a], byNumber[b]; va != nil && vb != nil {
		lines, ok := diffLines(va.Code, vb.Code)
		det.Diff = &diffView{A: a, B: b, Lines: lines, TooLong: !ok}
	}
	d.Detail = det
	return d
}

// maxDiffLines bounds each side of a diff (the table is their product).
const maxDiffLines = 1000

// diffLines is a line diff of a and b (longest common subsequence);
// false when either has more than maxDiffLines lines.
func diffLines(a, b string) ([]diffLine, bool) {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(x) > maxDiffLines || len(y) > maxDiffLines {
		return nil, false
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int32, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			out = append(out, diffLine{" ", x[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffLine{"-", x[i]})
			i++
		default:
			out = append(out, diffLine{"+", y[j]})
			j++
		}
	}
	for ; i < len(x); i++ {
		out = append(out, diffLine{"-", x[i]})
	}
	for ; j < len(y); j++ {
		out = append(out, diffLine{"+", y[j]})
	}
	return out, true
}

// programPage is where a program's page is.
func programPage(owner, name string) string {
	return "/console/programs?" + url.Values{"owner": {owner}, "name": {name}}.Encode()
}

// programFailed shows the Programs page with why an action failed.
func (c *Console) programFailed(w http.ResponseWriter, r *http.Request, v *visitor, err error) {
	d := c.programsPage(r.Context(), url.Values{}, v)
	d.Error = err.Error()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnprocessableEntity)
	_ = c.pages.render(w, "programs", c.view("programs", r, v, d))
}

// setProgramCurrent makes a version current (POST owner, name, version,
// csrf); the programs package refuses an operator who is not an admin
// another principal's program.
func (c *Console) setProgramCurrent(w http.ResponseWriter, r *http.Request, v *visitor) {
	if c.src.Programs == nil {
		http.NotFound(w, r)
		return
	}
	owner, name := r.PostFormValue("owner"), r.PostFormValue("name")
	ver, _ := strconv.Atoi(r.PostFormValue("version"))
	err := c.src.Programs.SetCurrentOf(r.Context(), c.programCaller(v), owner, name, ver)
	c.logger.Info("console: program version made current", slog.String("principal", v.Principal), slog.String("owner", owner),
		slog.String("program", name), slog.Int("version", ver), slog.Any("error", err))
	if err != nil {
		c.programFailed(w, r, v, err)
		return
	}
	http.Redirect(w, r, programPage(owner, name), http.StatusSeeOther)
}

// publishProgram publishes a version to an audience, or withdraws the
// publication when the audience is empty (POST owner, name, version, to,
// csrf); admins only (the programs package refuses the others).
func (c *Console) publishProgram(w http.ResponseWriter, r *http.Request, v *visitor) {
	if c.src.Programs == nil {
		http.NotFound(w, r)
		return
	}
	owner, name := r.PostFormValue("owner"), r.PostFormValue("name")
	ver, _ := strconv.Atoi(r.PostFormValue("version"))
	to := strings.FieldsFunc(r.PostFormValue("to"), func(r rune) bool { return r == ',' || r == ' ' })
	err := c.src.Programs.Publish(r.Context(), c.programCaller(v), owner, name, ver, to)
	c.logger.Info("console: program publication", slog.String("principal", v.Principal), slog.String("owner", owner),
		slog.String("program", name), slog.Int("version", ver), slog.Any("to", to), slog.Any("error", err))
	if err != nil {
		c.programFailed(w, r, v, err)
		return
	}
	http.Redirect(w, r, programPage(owner, name), http.StatusSeeOther)
}

// saveProgram saves a run's program as the operator's (POST id, name,
// description, csrf): the code is the run record's, never the form's;
// its parameters are inferred from its reads of args; it is vetted as
// save_program vets.
func (c *Console) saveProgram(w http.ResponseWriter, r *http.Request, v *visitor) {
	if c.src.Programs == nil {
		http.NotFound(w, r)
		return
	}
	id := r.PostFormValue("id")
	rec, ok := c.src.Desk.RecordOf(id)
	if !ok {
		c.programFailed(w, r, v, fmt.Errorf("no recent run record %q", id))
		return
	}
	caller := c.programCaller(v)
	saved, err := c.src.Programs.Save(r.Context(), caller, programs.SaveInput{Name: r.PostFormValue("name"),
		Description: r.PostFormValue("description"), Code: rec.Run.Code})
	c.logger.Info("console: run saved as a program", slog.String("principal", v.Principal), slog.String("run", id),
		slog.String("program", r.PostFormValue("name")), slog.Any("error", err))
	if err != nil {
		c.programFailed(w, r, v, err)
		return
	}
	http.Redirect(w, r, programPage(saved.Owner, saved.Name), http.StatusSeeOther)
}
