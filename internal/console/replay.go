package console

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/replay"
	"github.com/isogate/isogate/internal/textcut"
)

// Bounds of the replay action.
const (
	// maxReplays is how many replays run at once, over all admins: a
	// replay holds a sandbox worker for up to the record's timeout.
	maxReplays = 1
	// maxReplayOutcomes is how many replay outcomes the console keeps
	// (the latest of each record, oldest dropped first).
	maxReplayOutcomes = 50
	// maxReplayText bounds the replay's result and difference shown.
	maxReplayText = 8000
)

// ReplayFunc replays a run record against its recorded tool responses,
// under the record's limits, as `isogate replay` does.
type ReplayFunc func(ctx context.Context, rec *pipeline.RunRecord) (*replay.Outcome, error)

// replayOutcome is the latest replay of a record, as the record page
// shows it.
type replayOutcome struct {
	When time.Time
	By   string // the admin who replayed it
	Took time.Duration
	// Failed says why the replay could not run at all ("" when it ran).
	Failed string
	// Same reports that it ended as recorded (reproduced); Difference
	// says how it differs otherwise (REPLAY_DIFFERS).
	Same       bool
	Difference string
	// NotRun says why the program was not re-run (a run refused before
	// it started replays as its recorded refusal); "" when it was.
	NotRun string
	// Result is what the program returned this time (or its error).
	Result  string
	Console []string
}

// replays bounds the replays running and keeps their outcomes.
type replays struct {
	slots    chan struct{}
	mu       sync.Mutex
	outcomes map[string]*replayOutcome // by run id
	order    []string                  // run ids, oldest first
}

func newReplays() *replays {
	return &replays{slots: make(chan struct{}, maxReplays), outcomes: map[string]*replayOutcome{}}
}

// keep stores the outcome of run id's replay, replacing an earlier one.
func (rs *replays) keep(id string, o *replayOutcome) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.outcomes[id]; !ok {
		if len(rs.order) >= maxReplayOutcomes {
			delete(rs.outcomes, rs.order[0])
			rs.order = rs.order[1:]
		}
		rs.order = append(rs.order, id)
	}
	rs.outcomes[id] = o
}

// of returns the latest replay outcome of run id, or nil.
func (rs *replays) of(id string) *replayOutcome {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.outcomes[id]
}

// replayRun replays a recent run record against its recorded tool
// responses (POST id, csrf) and shows the record page with the outcome:
// reproduced, or REPLAY_DIFFERS with the difference. One replay runs at a
// time (maxReplays); another meanwhile is refused with 429.
func (c *Console) replayRun(w http.ResponseWriter, r *http.Request, v *visitor) {
	id := r.PostFormValue("id")
	rec, ok := c.src.Desk.RecordOf(id)
	if !ok {
		c.refuse(w, r, http.StatusNotFound, "no recent run record "+id)
		return
	}
	if c.src.Replay == nil {
		c.refuse(w, r, http.StatusNotImplemented, "this gateway cannot replay runs")
		return
	}
	select {
	case c.replays.slots <- struct{}{}:
		defer func() { <-c.replays.slots }()
	default:
		c.refuse(w, r, http.StatusTooManyRequests, "a replay is already running: try again when it ends")
		return
	}
	started := time.Now()
	out, err := c.src.Replay(r.Context(), rec.Run)
	o := &replayOutcome{When: started, By: v.Principal, Took: time.Since(started).Round(time.Millisecond)}
	switch {
	case err != nil:
		o.Failed = err.Error()
	default:
		o.Same, o.Difference, o.NotRun = out.Same, textcut.Clip(out.Difference, maxReplayText, "…"), out.NotRun
		o.Console = out.Response.Console
		if out.Response.IsError {
			o.Result = string(out.Response.Code) + ": " + out.Response.Text
		} else {
			o.Result = string(out.Response.Value)
		}
		o.Result = textcut.Clip(o.Result, maxReplayText, "…")
	}
	c.replays.keep(id, o)
	c.logger.Info("console: run replayed", slog.String("principal", v.Principal), slog.String("run", id),
		slog.Bool("reproduced", o.Same), slog.String("failed", o.Failed), slog.Duration("took", o.Took))
	http.Redirect(w, r, "/console/record?id="+url.QueryEscape(id), http.StatusSeeOther)
}
