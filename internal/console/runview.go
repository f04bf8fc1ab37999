package console

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/isogate/isogate/internal/desk"
	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/textcut"
)

// Bounds of what a run's page shows.
const (
	// shownBytes bounds each argument, result and error shown on a run's
	// page (the record keeps up to pipeline.MaxRecordedBytes of each).
	shownBytes = 4 << 10
	// runsPerPage is how many recent runs the runs page lists at once.
	runsPerPage = 50
)

// recordData is a run's page: a finished run's record, or a live run's
// calls so far, and the record's latest replay.
type recordData struct {
	ID, Principal string
	Started       time.Time
	Tier          string
	// State is "running", "ok" or "error".
	State string
	// Code and Message are how a failed run ended (the code once).
	Code, Message string
	DurationMS    int64
	Program       string
	Calls         []callView
	// Omitted, Refused and Unawaited are the calls the record only counts.
	Omitted, Refused, Unawaited int
	Console                     []string
	// Result is the program's result as shown (cut to shownBytes);
	// ResultNote says what was cut; ResultURI is the stored full output.
	Result, ResultNote, ResultURI string
	Durability                    string
	// Live: the run is still running (LiveID names it on the desk for
	// Cancel; Waiting counts its calls waiting for approval).
	Live    bool
	LiveID  string
	Waiting int

	CanReplay bool
	Replay    *replayOutcome
	// CanSave offers "save as program" (saved programs on).
	CanSave bool
}

// callView is one call on a run's page.
type callView struct {
	Seq                   int
	Tool                  string
	StartedMS, DurationMS int64
	OK, InFlight          bool
	Code, Error           string
	Args, ArgsNote        string
	Result, ResultNote    string
	// Approval says how long the call waited for approval and who
	// answered ("" when none was asked); Declined when it was refused.
	Approval string
	Declined bool
}

// recordView is the page of a finished run's record.
func recordView(r desk.Record) recordData {
	rec := r.Run
	d := recordData{ID: rec.ID, Principal: r.Principal, Started: rec.Started, Tier: rec.Tier, State: rec.Outcome,
		DurationMS: rec.DurationMS, Program: rec.Code, Calls: callViews(rec.Calls, false), Omitted: rec.OmittedCalls,
		Refused: rec.RefusedCalls, Unawaited: rec.UnawaitedCalls, Console: rec.Console, ResultURI: rec.ResultURI,
		Durability: rec.Durability}
	if rec.Error != nil {
		d.Code, d.Message = rec.Error.Code, withoutCode(rec.Error.Code, rec.Error.Message)
	} else {
		d.Result, d.ResultNote = shown(rec.Result)
		if rec.ResultBytes > 0 && d.ResultNote == "" && rec.Result.IsZero() {
			d.ResultNote = fmt.Sprintf("%d bytes, not kept in the record", rec.ResultBytes)
		}
	}
	return d
}

// liveView is the page of a run still running: its calls so far.
func liveView(r desk.RunView) recordData {
	d := recordData{ID: r.RecordID, Principal: r.Principal, Started: r.Started, State: "running",
		DurationMS: time.Since(r.Started).Milliseconds(), Program: r.Code, Live: true, LiveID: r.ID, Waiting: r.Waiting}
	if r.Record != nil {
		d.Calls = callViews(r.Record.Calls(), true)
		d.Omitted, d.Refused = r.Record.Totals()
	}
	return d
}

func callViews(calls []pipeline.CallRecord, live bool) []callView {
	out := make([]callView, len(calls))
	for i, c := range calls {
		v := callView{Seq: c.Seq, Tool: c.Backend + "." + c.Tool, StartedMS: c.StartedMS, DurationMS: c.DurationMS,
			OK: c.OK, Code: string(c.Code), Error: withoutCode(string(c.Code), c.Error)}
		if live && c.RunEnded { // still in flight, not cut short
			v.InFlight, v.Error = true, ""
		}
		if len(v.Error) > shownBytes {
			v.Error = textcut.Prefix(v.Error, shownBytes) + "…"
		}
		v.Args, v.ArgsNote = shown(c.Args)
		v.Result, v.ResultNote = shown(c.Result)
		if a := c.Approval; a != nil {
			v.Approval, v.Declined = approvalText(a), !a.Approved
		}
		out[i] = v
	}
	return out
}

// approvalText is "waited 83 s for approval, approved by alice on the
// console".
func approvalText(a *pipeline.ApprovalAnswer) string {
	wait := fmt.Sprintf("%d ms", a.WaitedMS)
	if a.WaitedMS >= 1000 {
		wait = fmt.Sprintf("%d s", (a.WaitedMS+500)/1000)
	}
	verdict := "approved"
	if !a.Approved {
		verdict = "declined"
	}
	who := ""
	switch {
	case a.Via == pipeline.ViaConsole && a.Name != "":
		who = " by " + a.Name + " on the console"
	case a.Via == pipeline.ViaConsole:
		who = " on the console"
	case a.Name != "":
		who = " by " + a.Name + "'s client"
	default:
		who = " by the agent's client"
	}
	return "waited " + wait + " for approval, " + verdict + who
}

// withoutCode is msg without a leading "CODE: " (the page shows the code
// once, beside it).
func withoutCode(code, msg string) string {
	if code == "" {
		return msg
	}
	return strings.TrimPrefix(msg, code+": ")
}

// shown is a recorded value as a page shows it: indented JSON with every
// invisible character made visible, cut to shownBytes, and a note of what
// was cut.
func shown(b pipeline.Blob) (string, string) {
	var text string
	var note string
	switch {
	case b.JSON != nil:
		var out bytes.Buffer
		if json.Indent(&out, b.JSON, "", "  ") == nil {
			text = htmlUnescaped(out.String())
		} else {
			text = string(b.JSON)
		}
		if len(b.JSON) > shownBytes {
			note = fmt.Sprintf("the first %d KiB of %d bytes shown", shownBytes>>10, len(b.JSON))
		}
	case b.Bytes > 0:
		text = b.Truncated
		note = fmt.Sprintf("the first %d KiB of %d bytes shown (the record keeps %d KiB)", shownBytes>>10, b.Bytes, pipeline.MaxRecordedBytes>>10)
	default:
		return "", ""
	}
	if len(text) > shownBytes {
		text = textcut.Prefix(text, shownBytes) + "…"
	}
	return visible(text), note
}

// htmlUnescaped is JSON text with the escapes Go's encoder writes for <,
// > and & (\u003c, \u003e, \u0026) written as the characters again, so
// a page shows a tool's text as it was (the page's template escapes it for
// HTML). An escaped backslash before "u003c" is left alone.
func htmlUnescaped(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		if rest := s[i+1:]; len(rest) >= 5 && rest[0] == 'u' {
			switch rest[1:5] {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2]) // an escape: the backslash and what it escapes
		i++
	}
	return b.String()
}

// runFilter selects recent runs; empty fields match everything.
type runFilter struct {
	Principal string
	// Outcome is "ok", "error" or an error code.
	Outcome string
	// Text must occur in the program, a tool called, the error or the id.
	Text string
}

func (f runFilter) match(r desk.Record) bool {
	rec := r.Run
	if f.Principal != "" && r.Principal != f.Principal {
		return false
	}
	switch {
	case f.Outcome == "":
	case f.Outcome == pipeline.OutcomeOK || f.Outcome == pipeline.OutcomeError:
		if rec.Outcome != f.Outcome {
			return false
		}
	case rec.Error == nil || rec.Error.Code != f.Outcome:
		return false
	}
	if f.Text == "" {
		return true
	}
	if strings.Contains(rec.Code, f.Text) || strings.Contains(rec.ID, f.Text) ||
		(rec.Error != nil && strings.Contains(rec.Error.Message, f.Text)) {
		return true
	}
	return slices.ContainsFunc(rec.Calls, func(c pipeline.CallRecord) bool {
		return strings.Contains(c.Backend+"."+c.Tool, f.Text)
	})
}

// runsData is the runs page: the live runs and a page of recent runs.
type runsData struct {
	Live    []desk.RunView
	Records []desk.Record
	Filter  runFilter
	// Codes are the error codes among the recent runs (the filter's).
	Codes []string
	// Page (from 1) of Pages; Total runs match the filter.
	Page, Pages, Total int
	// Prev and Next are the neighbouring pages ("" at an end), made of
	// url.Values.Encode (so safe as a link).
	Prev, Next template.URL
}

func (c *Console) runs(q url.Values) runsData {
	f := runFilter{Principal: q.Get("principal"), Outcome: q.Get("outcome"), Text: q.Get("text")}
	all := c.src.Desk.Records()
	codes := map[string]bool{}
	var recs []desk.Record
	for _, r := range all {
		if r.Run.Error != nil && r.Run.Error.Code != "" {
			codes[r.Run.Error.Code] = true
		}
		if f.match(r) {
			recs = append(recs, r)
		}
	}
	// Newest start first (the desk keeps them in the order they ended).
	slices.SortStableFunc(recs, func(a, b desk.Record) int { return b.Run.Started.Compare(a.Run.Started) })
	d := runsData{Live: c.src.Desk.Runs(), Filter: f, Total: len(recs), Pages: max(1, (len(recs)+runsPerPage-1)/runsPerPage)}
	for code := range codes {
		d.Codes = append(d.Codes, code)
	}
	slices.Sort(d.Codes)
	d.Page, _ = strconv.Atoi(q.Get("page"))
	d.Page = min(max(d.Page, 1), d.Pages)
	start := (d.Page - 1) * runsPerPage
	d.Records = recs[start:min(start+runsPerPage, len(recs))]
	page := func(n int) template.URL {
		v := url.Values{}
		for k, s := range map[string]string{"principal": f.Principal, "outcome": f.Outcome, "text": f.Text} {
			if s != "" {
				v.Set(k, s)
			}
		}
		v.Set("page", strconv.Itoa(n))
		return template.URL("/console/runs?" + v.Encode())
	}
	if d.Page > 1 {
		d.Prev = page(d.Page - 1)
	}
	if d.Page < d.Pages {
		d.Next = page(d.Page + 1)
	}
	slices.SortStableFunc(d.Live, func(a, b desk.RunView) int { return cmp.Compare(b.Started.UnixNano(), a.Started.UnixNano()) })
	return d
}
