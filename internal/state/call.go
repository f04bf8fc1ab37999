package state

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"time"
)

// The operations of programs' state object (state.<op>).
const (
	OpGet    = "get"
	OpSet    = "set"
	OpDelete = "delete"
	OpList   = "list"
)

// callArgs are the arguments of one state call as the bridge sends them:
// {key, value, ttl} or {prefix, after, limit}.
type callArgs struct {
	Key    *string         `json:"key"`
	Value  json.RawMessage `json:"value"`
	TTL    *float64        `json:"ttl"`
	Prefix string          `json:"prefix"`
	After  string          `json:"after"`
	Limit  float64         `json:"limit"`
}

// Call serves one state call of a program run in ctx (its principal's
// state, [Owner]): op is one of OpGet, OpSet, OpDelete, OpList and args its
// arguments as JSON. It returns the call's value as JSON: get the value
// (nil when absent), set nothing, delete true or false, list the keys.
func (s *State) Call(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	var a callArgs
	d := json.NewDecoder(bytes.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		return nil, invalid("state.%s: bad arguments: %v", op, err)
	}
	owner := Owner(ctx)
	key := func() (string, error) {
		if a.Key == nil {
			return "", invalid("state.%s: the key must be a string", op)
		}
		return *a.Key, nil
	}
	switch op {
	case OpGet:
		k, err := key()
		if err != nil {
			return nil, err
		}
		v, ok, err := s.Get(ctx, owner, k)
		if err != nil || !ok {
			return nil, err
		}
		return v, nil
	case OpSet:
		k, err := key()
		if err != nil {
			return nil, err
		}
		var ttl time.Duration
		if a.TTL != nil {
			if !(*a.TTL > 0) || *a.TTL > math.MaxInt64/float64(time.Second) {
				return nil, invalid("state.set(%q): ttl must be a positive number of seconds", k)
			}
			ttl = max(time.Duration(*a.TTL*float64(time.Second)), time.Millisecond)
		}
		return nil, s.Set(ctx, owner, k, a.Value, ttl)
	case OpDelete:
		k, err := key()
		if err != nil {
			return nil, err
		}
		existed, err := s.Delete(ctx, owner, k)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(map[bool]string{true: "true", false: "false"}[existed]), nil
	case OpList:
		if a.Limit != math.Trunc(a.Limit) {
			return nil, invalid("state.list: limit must be a whole number")
		}
		keys, err := s.List(ctx, owner, ListOptions{Prefix: a.Prefix, After: a.After, Limit: int(min(a.Limit, MaxListLimit))})
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(keys)
		return b, nil
	}
	return nil, invalid("state.%s is not a state operation (get, set, delete, list)", op)
}
