package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/programs"
)

func init() {
	RegisterSection(Section{Title: "Saved programs (issue 45)", Name: "programs", Order: 15, Run: programsSection})
}

// The principals of the programs section: agent repeats the task, bulk
// holds the many saved programs of the listing, other holds none.
var progTokens = map[string]config.StaticToken{
	"agent": {Token: "bench-agent-token-0001"},
	"bulk":  {Token: "bench-bulk-token-00002"},
	"other": {Token: "bench-other-token-0003"},
}

// progTaskName is the saved task's name (tool program_<name>).
const progTaskName = "restock_report"

// progTaskCode is the repeated task: the open orders of a region above a
// total, their customers' tiers, and the stock of what the gold and
// platinum customers ordered: three backend tools, a loop and filtering,
// written as an agent writes it. It reads its parameters from args.
const progTaskCode = `// Which open orders of a region, above a minimum total, come from our best
// customers, and which of the items they ordered are running low?
const { region, min_total, tiers, low_stock } = args;

const { orders } = await shop.list_orders({ status: "open" });
const candidates = orders.filter(
  (o) => o.region === region && o.total >= min_total,
);

// One lookup per distinct customer, not per order.
const customerIds = [...new Set(candidates.map((o) => o.customer_id))];
const customers = {};
for (const id of customerIds) {
  const c = await shop.get_customer({ id });
  customers[id] = c;
}

const best = candidates.filter((o) => tiers.includes(customers[o.customer_id].tier));

// The stock of every distinct SKU the best customers ordered.
const skus = [...new Set(best.flatMap((o) => o.items.map((i) => i.sku)))];
const stock = {};
for (const sku of skus) {
  const s = await shop.stock({ sku });
  stock[sku] = s.on_hand;
}

// A customer missing from the CRM is reported, not guessed.
const unknown = customerIds.filter((id) => !customers[id] || !customers[id].tier);

const low = skus
  .filter((sku) => stock[sku] < low_stock)
  .map((sku) => ({ sku, on_hand: stock[sku] }))
  .sort((a, b) => a.on_hand - b.on_hand);

return {
  region,
  orders_checked: candidates.length,
  best_customer_orders: best.map((o) => ({
    id: o.id,
    customer: customers[o.customer_id].name,
    tier: customers[o.customer_id].tier,
    total: o.total,
  })),
  low_stock: low,
  by_tier: Object.fromEntries(
    tiers.map((t) => [t, best.filter((o) => customers[o.customer_id].tier === t).length]),
  ),
  unknown_customers: unknown,
  revenue_at_risk: best
    .filter((o) => o.items.some((i) => stock[i.sku] < low_stock))
    .reduce((sum, o) => sum + o.total, 0)
    .toFixed(2),
};
`

// progTaskParams are the task's parameters as a TypeScript signature.
const progTaskParams = `{ region: string; min_total: number; tiers: string[]; low_stock: number }`

// progTaskArgs are the arguments of each repeat.
var progTaskArgs = map[string]any{"region": "eu", "min_total": 100, "tiers": []string{"gold", "platinum"}, "low_stock": 20}

// progInlineCode is the task as call_tool_chain code: the same program
// with its arguments written into it, as an agent without saved programs
// sends it on every repeat.
func progInlineCode() string {
	a, _ := json.Marshal(progTaskArgs)
	return "const args = " + string(a) + ";\n" + progTaskCode
}

// shopBackend serves list_orders (48 orders over three regions),
// get_customer and stock, deterministic; calls counts the calls made.
func shopBackend(calls *atomic.Int64) backend.Spec {
	type item struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	type order struct {
		ID         string  `json:"id"`
		CustomerID string  `json:"customer_id"`
		Region     string  `json:"region"`
		Status     string  `json:"status"`
		Total      float64 `json:"total"`
		Items      []item  `json:"items"`
	}
	var orders []order
	regions := []string{"eu", "us", "apac"}
	for i := range 48 {
		orders = append(orders, order{ID: fmt.Sprintf("o-%04d", i), CustomerID: fmt.Sprintf("c-%02d", i%12),
			Region: regions[i%3], Status: []string{"open", "open", "shipped"}[i%3*7%3], Total: float64(40 + i*13%220),
			Items: []item{{SKU: fmt.Sprintf("sku-%02d", i%9), Qty: 1 + i%3}, {SKU: fmt.Sprintf("sku-%02d", (i*5)%9), Qty: 2}}})
	}
	text := func(v any) *mcp.CallToolResult {
		calls.Add(1)
		b, _ := json.Marshal(v)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop"}, nil)
	type statusIn struct {
		Status string `json:"status"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "list_orders", Description: "Lists the orders with a status."},
		func(_ context.Context, _ *mcp.CallToolRequest, in statusIn) (*mcp.CallToolResult, any, error) {
			var out []order
			for _, o := range orders {
				if o.Status == in.Status {
					out = append(out, o)
				}
			}
			return text(map[string]any{"orders": out}), nil, nil
		})
	type idIn struct {
		ID string `json:"id"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "get_customer", Description: "A customer's name, tier and email."},
		func(_ context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, any, error) {
			var n int
			fmt.Sscanf(in.ID, "c-%d", &n)
			return text(map[string]any{"id": in.ID, "name": fmt.Sprintf("Customer %d", n),
				"tier": []string{"bronze", "silver", "gold", "platinum"}[n%4], "email": fmt.Sprintf("c%d@example.com", n)}), nil, nil
		})
	type skuIn struct {
		SKU string `json:"sku"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "stock", Description: "Units on hand of a SKU."},
		func(_ context.Context, _ *mcp.CallToolRequest, in skuIn) (*mcp.CallToolResult, any, error) {
			var n int
			fmt.Sscanf(in.SKU, "sku-%d", &n)
			return text(map[string]any{"sku": in.SKU, "on_hand": n * 7 % 40}), nil, nil
		})
	return backend.InMemory("shop", srv)
}

// wireCount counts the HTTP body bytes a client sends and receives (the
// JSON-RPC messages, SSE framing included; headers not counted) and
// presents its bearer token.
type wireCount struct {
	token         string
	sent, receive atomic.Int64
}

func (w *wireCount) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+w.token)
	if r.Body != nil {
		r.Body = &countingBody{ReadCloser: r.Body, n: &w.sent}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, n: &w.receive}
	return resp, nil
}

// countingBody adds what is read through it to n.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	k, err := c.ReadCloser.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// progClient is one principal's session with its wire counter.
type progClient struct {
	cs   *mcp.ClientSession
	wire *wireCount
}

// programsGateway serves a gateway with the shop backend and the
// section's principals over streamable HTTP on a loopback port, saved
// programs kept in dataDir; stop closes it.
func programsGateway(ctx context.Context, dataDir string, calls *atomic.Int64) (url string, g *app.App, stop func(), err error) {
	c := config.Default()
	c.Server.CacheDir = ""
	c.Sandbox.Isolation = config.IsolationThread
	c.Sandbox.TrustedCode = true
	c.RunCode.Enabled = false
	c.Store.DataDir = dataDir
	c.Server.Auth.Mode = config.AuthToken
	c.Server.Auth.Tokens = progTokens
	g, err = app.New(c, app.Options{ExtraSpecs: []backend.Spec{shopBackend(calls)}})
	if err != nil {
		return "", nil, nil, err
	}
	g.Start(ctx)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := g.Backends.WaitHealthy(wctx); err != nil {
		g.Close()
		return "", nil, nil, err
	}
	ln, err := g.Surface.Listen("127.0.0.1:0")
	if err != nil {
		g.Close()
		return "", nil, nil, err
	}
	sctx, scancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = g.Surface.ServeHTTP(sctx, ln); close(done) }()
	return "http://" + ln.Addr().String() + "/mcp", g, func() { scancel(); <-done; g.Close() }, nil
}

// connectProg opens a session of the principal name.
func connectProg(ctx context.Context, url, name string) (*progClient, error) {
	w := &wireCount{token: progTokens[name].Token}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-" + name}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: w}}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s connects: %w", name, err)
	}
	return &progClient{cs: cs, wire: w}, nil
}

// wireDelta is what one exchange sent and received and how long it took.
type wireDelta struct {
	sent, received int64
	took           time.Duration
}

// call calls tool and returns its text; an error result is an error.
func (p *progClient) call(ctx context.Context, tool string, args any) (string, wireDelta, error) {
	s0, r0 := p.wire.sent.Load(), p.wire.receive.Load()
	t0 := time.Now()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	d := wireDelta{took: time.Since(t0), sent: p.wire.sent.Load() - s0, received: p.wire.receive.Load() - r0}
	if err != nil {
		return "", d, fmt.Errorf("%s: %w", tool, err)
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		return "", d, fmt.Errorf("%s: %.300s", tool, text)
	}
	return text, d, nil
}

// list lists the session's tools (every page) and returns how many.
func (p *progClient) list(ctx context.Context) (int, wireDelta, error) {
	s0, r0 := p.wire.sent.Load(), p.wire.receive.Load()
	t0 := time.Now()
	n := 0
	var cursor string
	for {
		res, err := p.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return 0, wireDelta{}, fmt.Errorf("tools/list: %w", err)
		}
		n += len(res.Tools)
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return n, wireDelta{took: time.Since(t0), sent: p.wire.sent.Load() - s0, received: p.wire.receive.Load() - r0}, nil
}

// progStats sums up one contender's samples.
type progStats struct {
	sent, received     int64 // medians
	p50, p99           time.Duration
	samples            int
	firstSent, firstRx int64
}

func statsOf(ds []wireDelta) progStats {
	took := make([]time.Duration, len(ds))
	sent := make([]int64, len(ds))
	rx := make([]int64, len(ds))
	for i, d := range ds {
		took[i], sent[i], rx[i] = d.took, d.sent, d.received
	}
	slices.Sort(took)
	slices.Sort(sent)
	slices.Sort(rx)
	n := len(ds)
	return progStats{sent: sent[n/2], received: rx[n/2], p50: took[n/2], p99: took[min(n*99/100, n-1)], samples: n}
}

// inTurns runs each contender n times per round, the order rotating each
// round, and returns each one's samples.
func inTurns(ctx context.Context, rounds, per int, runs ...func() (wireDelta, error)) ([][]wireDelta, error) {
	out := make([][]wireDelta, len(runs))
	for round := range rounds {
		for k := range runs {
			i := (k + round) % len(runs)
			for range per {
				if err := pause(ctx, SampleGap); err != nil {
					return nil, err
				}
				d, err := runs[i]()
				if err != nil {
					return nil, err
				}
				out[i] = append(out[i], d)
			}
		}
	}
	return out, nil
}

// programsSection measures issue 45's goals through a real gateway over
// streamable HTTP: a repeated task sent as call_tool_chain code each time
// against the same program saved once and called as its tool, then
// tools/list with many saved programs visible against none, and resolving
// one of them by name.
func programsSection(ctx context.Context, cfg ReportConfig) (string, error) {
	dir, err := os.MkdirTemp("", "isogate-bench-programs-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	var calls atomic.Int64
	url, g, stop, err := programsGateway(ctx, dir, &calls)
	if err != nil {
		return "", fmt.Errorf("programs gateway: %w", err)
	}
	defer stop()
	clients := map[string]*progClient{}
	for _, name := range []string{"agent", "bulk", "other"} {
		c, err := connectProg(ctx, url, name)
		if err != nil {
			return "", err
		}
		defer c.cs.Close()
		clients[name] = c
	}
	agent := clients["agent"]
	inline := progInlineCode()
	calls0 := calls.Load()
	wantText, _, err := agent.call(ctx, "call_tool_chain", map[string]any{"code": inline})
	if err != nil {
		return "", fmt.Errorf("the task inline: %w", err)
	}
	callsPerRun := calls.Load() - calls0
	_, saveWire, err := agent.call(ctx, "save_program", map[string]any{"name": progTaskName,
		"description": "The open orders of a region above a total from gold and platinum customers, and the items they ordered that run low.",
		"code":        progTaskCode, "parameters": progTaskParams})
	if err != nil {
		return "", err
	}
	tool := programs.ToolName(progTaskName)
	if got, _, err := agent.call(ctx, tool, progTaskArgs); err != nil {
		return "", err
	} else if got != wantText {
		return "", fmt.Errorf("the saved program answered %.200q, the inline code %.200q", got, wantText)
	}

	rounds, per, warm := 6, max(iterations(cfg)/30, 5), 5
	if cfg.Smoke {
		rounds, per, warm = 2, 2, 1
	}
	runInline := func() (wireDelta, error) {
		text, d, err := agent.call(ctx, "call_tool_chain", map[string]any{"code": inline})
		if err == nil && text != wantText {
			err = fmt.Errorf("inline answered %.200q", text)
		}
		return d, err
	}
	runSaved := func() (wireDelta, error) {
		text, d, err := agent.call(ctx, tool, progTaskArgs)
		if err == nil && text != wantText {
			err = fmt.Errorf("saved answered %.200q", text)
		}
		return d, err
	}
	for range warm {
		for _, r := range []func() (wireDelta, error){runInline, runSaved} {
			if _, err := r(); err != nil {
				return "", err
			}
		}
	}
	task, err := inTurns(ctx, rounds, per, runInline, runSaved)
	if err != nil {
		return "", err
	}
	in, sv := statsOf(task[0]), statsOf(task[1])
	cfg.Figures.SetDuration("programs/task/inline/p50", in.p50)
	cfg.Figures.SetDuration("programs/task/saved/p50", sv.p50)

	var b strings.Builder
	fmt.Fprintf(&b, "A real gateway (thread isolation, `sandbox.typecheck` off as by default, token auth) over streamable HTTP on loopback, an in-process go-sdk backend `shop` (`list_orders`, `get_customer`, `stock`), the go-sdk client. "+
		"The task (%d bytes of TypeScript: one `list_orders`, a `get_customer` per distinct customer and a `stock` per distinct SKU in loops, with filtering; %d tool calls a run) repeated "+
		"as `call_tool_chain` code with its arguments written in, against the same code saved once with `save_program` (%d bytes sent, once) and called as `%s` with its arguments. "+
		"The two took turns in %d rounds of %d (order rotating, %s apart) after %d warm-ups each; both answered the same text each time. "+
		"Bytes are HTTP bodies counted by a RoundTripper on the client (the JSON-RPC messages, SSE framing included, headers not), medians per repeat.\n\n",
		len(progTaskCode), callsPerRun, saveWire.sent, tool, rounds, per, SampleGap, warm)
	b.WriteString("| per repeat | sent by the client | received | p50 | p99 |\n|---|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| `call_tool_chain`, the code each time | %d B | %d B | %s | %s |\n", in.sent, in.received, fmtDur(in.p50), fmtDur(in.p99))
	fmt.Fprintf(&b, "| `%s`, saved once | %d B | %d B | %s | %s |\n", tool, sv.sent, sv.received, fmtDur(sv.p50), fmtDur(sv.p99))
	fmt.Fprintf(&b, "| saved ÷ code each time | %.3f (%.1f %% fewer; goal ≥ 90 %%) | %.2f | ×%.2f | ×%.2f |\n\n",
		float64(sv.sent)/float64(in.sent), 100*(1-float64(sv.sent)/float64(in.sent)),
		float64(sv.received)/float64(in.received), float64(sv.p50)/float64(in.p50), float64(sv.p99)/float64(in.p99))
	// The saved call's request does not grow with the program; the inline
	// one is an envelope plus the code as a JSON string.
	var quoted bytes.Buffer
	enc := json.NewEncoder(&quoted)
	enc.SetEscapeHTML(false) // as the client sends it
	_ = enc.Encode(inline)
	envelope := in.sent - int64(quoted.Len()-1) // less the encoder's newline
	fmt.Fprintf(&b, "The saved call's request (%d B) does not grow with the program; the inline one is %d B of envelope plus the code as a JSON string (%d B here). "+
		"So a repeat sends 90 %% fewer bytes from a program of about %d B as a JSON string up; the issue's 19 KB script would send %.1f %% fewer.\n\n",
		sv.sent, envelope, quoted.Len()-1, 10*sv.sent-envelope, 100*(1-float64(sv.sent)/float64(envelope+19<<10)))

	// Many saved programs: bulk saves them through save_program.
	many := 1000
	if cfg.Smoke {
		many = 20
	}
	bulk, other := clients["bulk"], clients["other"]
	t0 := time.Now()
	for i := range many {
		if _, _, err := bulk.call(ctx, "save_program", map[string]any{"name": fmt.Sprintf("lookup_%04d", i),
			"description": "Looks a customer up by id (a saved program of the benchmark).",
			"code":        "return await shop.get_customer({ id: args.id });", "parameters": "{ id: string }"}); err != nil {
			return "", err
		}
	}
	saveEach := time.Since(t0) / time.Duration(many)
	nb, _, err := bulk.list(ctx)
	if err != nil {
		return "", err
	}
	no, _, err := other.list(ctx)
	if err != nil {
		return "", err
	}
	if nb != no+many {
		return "", fmt.Errorf("bulk lists %d tools, other %d: want %d more", nb, no, many)
	}
	lrounds, lper := 4, max(iterations(cfg)/50, 3)
	if cfg.Smoke {
		lrounds, lper = 1, 2
	}
	lists, err := inTurns(ctx, lrounds, lper,
		func() (wireDelta, error) { _, d, err := bulk.list(ctx); return d, err },
		func() (wireDelta, error) { _, d, err := other.list(ctx); return d, err })
	if err != nil {
		return "", err
	}
	lb, lo := statsOf(lists[0]), statsOf(lists[1])

	// Resolving by name and listing on the gateway's own programs (its
	// bbolt store), as a tool call does before it runs.
	caller := programs.Caller{Principal: &authn.Principal{Name: "bulk"}}
	ref := fmt.Sprintf("lookup_%04d", many/2)
	res, err := timeEach(ctx, 200, func() error {
		v, err := g.Programs.Resolve(ctx, caller, ref)
		if err == nil && v.Version != 1 {
			err = fmt.Errorf("resolved %s@%d", v.Name, v.Version)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("resolve: %w", err)
	}
	lst, err := timeEach(ctx, 200, func() error {
		l, err := g.Programs.List(ctx, caller)
		if err == nil && len(l) != many {
			err = fmt.Errorf("listed %d programs", len(l))
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("list: %w", err)
	}
	cfg.Figures.SetDuration("programs/resolve/p50", res)
	cfg.Figures.SetDuration("programs/list/p50", lst)
	fmt.Fprintf(&b, "Listing: principal `bulk` saved %d programs through `save_program` (%s each, type-checked as strict and planned at save); `other` saved none. "+
		"`tools/list` (every page) of the two, in turns (%d rounds of %d).\n\n", many, fmtDur(saveEach), lrounds, lper)
	b.WriteString("| `tools/list` | tools | sent | received | p50 | p99 |\n|---|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d saved programs visible | %d | %d B | %d B | %s | %s |\n", many, nb, lb.sent, lb.received, fmtDur(lb.p50), fmtDur(lb.p99))
	fmt.Fprintf(&b, "| none | %d | %d B | %d B | %s | %s |\n", no, lo.sent, lo.received, fmtDur(lo.p50), fmtDur(lo.p99))
	fmt.Fprintf(&b, "| with ÷ without | | | ×%.1f | ×%.2f | ×%.2f |\n\n", float64(lb.received)/float64(lo.received), float64(lb.p50)/float64(lo.p50), float64(lb.p99)/float64(lo.p99))
	fmt.Fprintf(&b, "On the gateway's own store (bbolt in `store.data_dir`), 200 times each, median: resolving `%s` by name among %d (`Programs.Resolve`, what a call of `program_<name>` does first) **%s**; listing all %d (`Programs.List`) **%s** (goal: under 1 ms each).\n",
		ref, many, fmtDur(res), many, fmtDur(lst))
	return b.String(), nil
}

// timeEach runs f n times and returns the median time of one.
func timeEach(ctx context.Context, n int, f func() error) (time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	return ds[n/2], nil
}
