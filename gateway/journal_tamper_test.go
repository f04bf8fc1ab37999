package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/resultstore/redistest"
)

// twoPauses pays twice, each payment under approval: its run pauses twice.
const twoPauses = `
const out = [];
out.push((await counter.bump({i: 0})).n);
out.push((await counter.pay({amount: 1})).n);
out.push((await counter.bump({i: 1})).n);
out.push((await counter.pay({amount: 2})).n);
return out;`

// callChain starts code through cs.
func callChain(t *testing.T, cs *mcp.ClientSession, code string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain", Arguments: map[string]any{"code": code}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// approve answers every input request of res through cs with accept.
func approve(t *testing.T, cs *mcp.ClientSession, res *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	answers := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		answers[id] = &mcp.ElicitResult{Action: "accept"}
	}
	next, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool_chain",
		Arguments: map[string]any{"code": twoPauses}, InputResponses: answers, RequestState: res.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// journalKeys are the Redis keys of the journal a durable requestState
// names: its hash and its list of entries.
func journalKeys(state string) (hash, list string) {
	id, _, _ := strings.Cut(strings.TrimPrefix(state, "durable-"), "-")
	hash = resultstore.RedisKeyPrefix + "journals:j:" + id
	return hash, hash + ":e"
}

// TestJournalRolledBackInRedis: a durable run paused twice on two
// replicas sharing a real redis-server (store.hmac_key set). Someone who
// can write Redis puts back the journal as it was at the first pause (its
// entries and tail seal, both genuine) under the second pause's token:
// the retry of the second pause is refused with JOURNAL_TAMPERED and no
// call is made. Before, the retry claimed the shorter journal, replayed
// it and asked again for the first payment, already made: approving it
// paid twice.
func TestJournalRolledBackInRedis(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, _ := durableReplica(t, srv.URL(), counter)
	urlB, _ := durableReplica(t, srv.URL(), counter)
	a, b := roundTripClient(t, urlA), roundTripClient(t, urlB)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()

	first := callChain(t, a, twoPauses)
	if !strings.HasPrefix(first.RequestState, "durable-") || counter.count() != 1 {
		t.Fatalf("first pause: %+v, %d calls", first, counter.count())
	}
	hash, list := journalKeys(first.RequestState)
	oldEntries, err := rdb.LRange(ctx, list, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	oldTail, err := rdb.HGet(ctx, hash, "t").Result()
	if err != nil {
		t.Fatal(err)
	}
	second := approve(t, b, first)
	if !strings.HasPrefix(second.RequestState, "durable-") || counter.count() != 3 {
		t.Fatalf("second pause: %s %v, %d calls (want 3)", resultText(second), second.InputRequests, counter.count())
	}
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, list)
		p.RPush(ctx, list, stringsToAny(oldEntries)...)
		p.PExpire(ctx, list, time.Minute)
		p.HSet(ctx, hash, "t", oldTail)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	before := counter.count()
	res := approve(t, a, second)
	if len(res.InputRequests) > 0 {
		res = approve(t, a, res) // the rolled-back run asks for the first payment again: approve it
	}
	if !res.IsError || !strings.Contains(resultText(res), "JOURNAL_TAMPERED") || counter.count() != before {
		t.Fatalf("retry of the second pause on a rolled-back journal: %d calls made (want 0), answer %s (input requests %v)", counter.count()-before, resultText(res), res.InputRequests)
	}
}

func stringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestJournalTamperedInRedis: a durable run paused on replica A, its
// journal changed in the real redis-server the replicas share
// (store.hmac_key set), its retry sent to replica B. Entries swapped, an
// entry planted for a call the program never made, a genuine entry of
// another run planted, the whole journal of another run of the same
// principal or of another principal put in its place (owner, token and
// seals copied along): each retry is refused with JOURNAL_TAMPERED, and
// no call is made. (A result rewritten, the journal cut short, an entry
// removed: TestDurableRunResumesOnAnotherReplica; a journal put back as it
// was at an earlier pause: TestJournalRolledBackInRedis.)
func TestJournalTamperedInRedis(t *testing.T) {
	srv := redistest.ForTest(t)
	counter := newCountingBackend()
	urlA, _ := durableReplica(t, srv.URL(), counter)
	urlB, _ := durableReplica(t, srv.URL(), counter)
	a, b := roundTripClient(t, urlA), roundTripClient(t, urlB)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()
	// Another principal's genuine journal, sealed by the gateway's key.
	other, err := resultstore.NewRedisJournals(resultstore.RedisOptions{URL: srv.URL(),
		Prefix: resultstore.RedisKeyPrefix + "journals:", HMACKey: []byte("durable-test-hmac-key-0123456789")}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.AppendJournal(ctx, "mallory", "mallorys-run", "h", "tok", resultstore.JournalCursor{},
		[][]byte{[]byte(`{"k":"begin","code":"return 1","seed":[1,2,3,4]}`)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	copyJournal := func(fromHash, fromList, hash, list string) error {
		entries, err := rdb.LRange(ctx, fromList, 0, -1).Result()
		if err != nil {
			return err
		}
		fields, err := rdb.HGetAll(ctx, fromHash).Result()
		if err != nil {
			return err
		}
		owner, token := rdb.HGet(ctx, hash, "o").Val(), rdb.HGet(ctx, hash, "p").Val()
		_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, list)
			p.RPush(ctx, list, stringsToAny(entries)...)
			p.PExpire(ctx, list, time.Minute)
			p.HSet(ctx, hash, "t", fields["t"], "s", fields["s"], "o", owner, "p", token)
			return nil
		})
		return err
	}
	for _, tamper := range []struct {
		name string
		do   func(hash, list string, entries []string) error
	}{
		{"two entries swapped", func(_, list string, entries []string) error {
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.LSet(ctx, list, 1, entries[2])
				p.LSet(ctx, list, 2, entries[1])
				return nil
			})
			return err
		}},
		{"a call the program never made planted", func(_, list string, entries []string) error {
			forged := `{"k":"start","seq":4,"backend":"counter","tool":"pay","args":{"amount":500}}`
			return rdb.LInsertBefore(ctx, list, entries[len(entries)-1], forged).Err()
		}},
		{"an entry of another run planted", func(_, list string, entries []string) error {
			p := pause(t, a)
			oh, ol := journalKeys(p.RequestState)
			if err := rdb.LSet(ctx, list, 2, rdb.LIndex(ctx, ol, 2).Val()).Err(); err != nil {
				return err
			}
			return rdb.Del(ctx, oh, ol).Err()
		}},
		{"another run's journal in its place", func(hash, list string, _ []string) error {
			p := pause(t, a)
			oh, ol := journalKeys(p.RequestState)
			if err := copyJournal(oh, ol, hash, list); err != nil {
				return err
			}
			return rdb.Del(ctx, oh, ol).Err() // its paused copy on A ends
		}},
		{"another principal's journal in its place", func(hash, list string, _ []string) error {
			return copyJournal(other.JournalKey("mallorys-run"), other.JournalEntriesKey("mallorys-run"), hash, list)
		}},
	} {
		t.Run(tamper.name, func(t *testing.T) {
			paused := pause(t, a)
			hash, list := journalKeys(paused.RequestState)
			entries, err := rdb.LRange(ctx, list, 0, -1).Result()
			if err != nil || len(entries) < 4 {
				t.Fatalf("journal %s: %v %d entries", list, err, len(entries))
			}
			if err := tamper.do(hash, list, entries); err != nil {
				t.Fatal(err)
			}
			before := counter.count()
			text, isErr := retry(t, b, paused.RequestState)
			if !isErr || !strings.Contains(text, "JOURNAL_TAMPERED") || counter.count() != before {
				t.Fatalf("%d calls made (want 0), answer %s", counter.count()-before, text)
			}
		})
	}
}
