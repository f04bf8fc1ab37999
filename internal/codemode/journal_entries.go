package codemode

import (
	"encoding/json"
	"fmt"

	"github.com/isogate/isogate/v8sandbox"
)

// A durable run's journal is append-only: every change of a run's
// [Journal] is one entry (JSON), written to the store in order, and a
// journal is read back by applying its entries in that order. A run of n
// calls writes O(n) bytes (each call's start and result once), whatever
// the store.

// The kinds of journal entries.
const (
	entryBegin  = "begin"  // the run's source, inputs and random seed: the first entry
	entryClock  = "clock"  // Date.now() values the program read
	entryStart  = "start"  // a call journalled as started, before it is sent
	entryAsking = "asking" // a call paused for an approval (not sent)
	entryAnswer = "answer" // an approval answer (the call is started again)
	entryDone   = "done"   // a call's outcome
	entryReplay = "replay" // the run was resumed by replay
)

// journalEntry is one entry of a journal; which fields are set depends on
// its kind K.
type journalEntry struct {
	K             string               `json:"k"`
	Code          string               `json:"code,omitempty"`
	TimeoutMS     int64                `json:"timeout_ms,omitempty"`
	MaxOutputSize int                  `json:"max_output_size,omitempty"`
	Intent        string               `json:"intent,omitempty"`
	Seed          *[4]uint32           `json:"seed,omitempty"`
	Clock         []float64            `json:"v,omitempty"`
	Seq           int                  `json:"seq,omitempty"`
	Backend       string               `json:"backend,omitempty"`
	Tool          string               `json:"tool,omitempty"`
	Args          json.RawMessage      `json:"args,omitempty"`
	After         []int                `json:"after,omitempty"`
	Reply         *v8sandbox.HostReply `json:"reply,omitempty"`
	Approved      bool                 `json:"approved,omitempty"`
}

// beginEntry is the first entry of a journal j.
func beginEntry(j *Journal) *journalEntry {
	seed := j.Seed
	return &journalEntry{K: entryBegin, Code: j.Code, TimeoutMS: j.TimeoutMS, MaxOutputSize: j.MaxOutputSize,
		Intent: j.Intent, Seed: &seed}
}

// apply makes entry e's change to j (bySeq: j's calls by seq).
func apply(j *Journal, bySeq map[int]int, e *journalEntry) error {
	i, known := bySeq[e.Seq]
	switch e.K {
	case entryBegin:
		if e.Seed == nil {
			return fmt.Errorf("journal entry %q without a seed", e.K)
		}
		j.Code, j.TimeoutMS, j.MaxOutputSize, j.Intent, j.Seed = e.Code, e.TimeoutMS, e.MaxOutputSize, e.Intent, *e.Seed
	case entryClock:
		j.Clock = append(j.Clock, e.Clock...)
	case entryStart:
		if known {
			j.Calls[i].State = callStarted
			return nil
		}
		bySeq[e.Seq] = len(j.Calls)
		j.Calls = append(j.Calls, JournalCall{Seq: e.Seq, Backend: e.Backend, Tool: e.Tool, Args: e.Args, State: callStarted, After: e.After})
	case entryAsking:
		if known {
			j.Calls[i].State = callAsking
		}
	case entryAnswer:
		j.Answers = append(j.Answers, JournalAnswer{Seq: e.Seq, Approved: e.Approved})
		if known {
			j.Calls[i].State = callStarted
		}
	case entryDone:
		if known {
			j.Calls[i].State, j.Calls[i].Reply = callDone, e.Reply
		}
	case entryReplay:
		j.Replays++
	default:
		return fmt.Errorf("journal entry of unknown kind %q", e.K)
	}
	return nil
}

// ParseJournal reads a journal from its entries, in the order a
// [DurableRun] wrote them (see [DurableRun.Flush]).
func ParseJournal(entries [][]byte) (*Journal, error) {
	j := &Journal{Calls: []JournalCall{}, loaded: true}
	bySeq := map[int]int{}
	for n, raw := range entries {
		var e journalEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("durable run journal, entry %d: %w", n, err)
		}
		if (n == 0) != (e.K == entryBegin) {
			return nil, fmt.Errorf("durable run journal, entry %d: a %q entry (a journal starts with its only %q)", n, e.K, entryBegin)
		}
		if err := apply(j, bySeq, &e); err != nil {
			return nil, fmt.Errorf("durable run journal, entry %d: %w", n, err)
		}
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("durable run journal: no entries")
	}
	return j, nil
}
