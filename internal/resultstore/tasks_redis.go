package resultstore

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisTasks is a [TaskStore] on Redis, shared by every replica that
// points at it: a task created through one replica is read, awaited and
// cancelled through any other. Each task is a hash (owner, sealed state
// with store.hmac_key as results are, status) that Redis expires at the
// end of the task's TTL; each account has an index of its task ids, by
// creation time, for listing and for the bound on live tasks.
type RedisTasks struct {
	client *redis.Client
	prefix string
	key    []byte
}

// NewRedisTasks returns a task store on the same server, key prefix and
// HMAC key as r.
func NewRedisTasks(r *Redis) *RedisTasks {
	return &RedisTasks{client: r.client.Client, prefix: r.prefix, key: r.key}
}

func (r *RedisTasks) taskKey(id string) string { return r.prefix + "t:" + id }

// sealName is what a task's MAC covers besides its state.
func (r *RedisTasks) sealName(owner, id string) string { return r.taskKey(id) + "\x00" + owner }

func (r *RedisTasks) wrap(err error) error {
	return fmt.Errorf("task store (redis %s) unavailable: %w", r.client.Options().Addr, err)
}

func (r *RedisTasks) seal(t *Task) ([]byte, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encoding task %s: %w", t.ID, err)
	}
	return Seal(r.key, r.sealName(t.Owner, t.ID), raw), nil
}

// Create implements [TaskStore].
func (r *RedisTasks) Create(ctx context.Context, t *Task, max int) error {
	data, err := r.seal(t)
	if err != nil {
		return err
	}
	res, err := createTaskScript.Run(ctx, r.client, []string{r.prefix}, t.ID, t.Owner, data, t.Status,
		t.expiresAt().UnixMilli(), t.CreatedAt.UnixMilli(), max, AccountOf(t.Owner)).Text()
	if err != nil {
		return r.wrap(err)
	}
	switch res {
	case "ok":
		return nil
	case "full":
		return fmt.Errorf("%w (%d)", ErrTooManyTasks, max)
	}
	return fmt.Errorf("task store (redis): unexpected reply %q", res)
}

// Get implements [TaskStore].
func (r *RedisTasks) Get(ctx context.Context, owner, id string) (*Task, error) {
	vals, err := r.client.HMGet(ctx, r.taskKey(id), "o", "d").Result()
	if err != nil {
		return nil, r.wrap(err)
	}
	o, ok1 := vals[0].(string)
	d, ok2 := vals[1].(string)
	if !ok1 || !ok2 || subtle.ConstantTimeCompare([]byte(o), []byte(owner)) != 1 {
		return nil, fmt.Errorf("task %w", ErrNotFound)
	}
	raw, err := Unseal(r.key, r.sealName(owner, id), []byte(d))
	if err != nil {
		return nil, fmt.Errorf("task %w (%w)", ErrNotFound, err)
	}
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil || t.ID != id || t.Owner != owner {
		return nil, fmt.Errorf("task %w (undecodable state)", ErrNotFound)
	}
	return &t, nil
}

// Update implements [TaskStore].
func (r *RedisTasks) Update(ctx context.Context, t *Task) error {
	return r.update(ctx, t, updateTaskScript, []string{r.taskKey(t.ID)})
}

// UpdateHeld implements [HeldTaskStore]: the write and the check that
// holder still holds the task's lease (RedisLeases, same server and
// prefix) are one script.
func (r *RedisTasks) UpdateHeld(ctx context.Context, t *Task, holder string) error {
	return r.update(ctx, t, updateHeldTaskScript, []string{r.taskKey(t.ID), leaseKeyOf(r.prefix, t.ID)}, holder)
}

// update writes t's sealed state with script (keys; its arguments: the
// owner, the state, the status, then extra) and reads its answer: "ok",
// "terminal" (ErrTaskTerminal), "lost" (the lease, ErrLeaseLost) or not
// found.
func (r *RedisTasks) update(ctx context.Context, t *Task, script *redis.Script, keys []string, extra ...any) error {
	data, err := r.seal(t)
	if err != nil {
		return err
	}
	args := append([]any{t.Owner, data, t.Status}, extra...)
	res, err := script.Run(ctx, r.client, keys, args...).Text()
	if err != nil {
		return r.wrap(err)
	}
	switch res {
	case "ok":
		return nil
	case "terminal":
		return ErrTaskTerminal
	case "lost":
		return fmt.Errorf("task %s: %w", t.ID, ErrLeaseLost)
	}
	return fmt.Errorf("task %w", ErrNotFound)
}

// Cancel implements [TaskStore].
func (r *RedisTasks) Cancel(ctx context.Context, owner, id, message string) (*Task, error) {
	t, err := r.Get(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if t.Terminal() {
		return t, ErrTaskTerminal
	}
	t.Status, t.StatusMessage = TaskCancelled, message
	if err := r.Update(ctx, t); err != nil {
		if errors.Is(err, ErrTaskTerminal) { // finished meanwhile
			if now, gerr := r.Get(ctx, owner, id); gerr == nil {
				return now, ErrTaskTerminal
			}
		}
		return nil, err
	}
	return t, nil
}

// List implements [TaskStore].
func (r *RedisTasks) List(ctx context.Context, owner string) ([]*Task, error) {
	ids, err := r.client.ZRange(ctx, r.prefix+"to:"+AccountOf(owner), 0, -1).Result()
	if err != nil {
		return nil, r.wrap(err)
	}
	var out []*Task
	for _, id := range ids {
		t, err := r.Get(ctx, owner, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// createTaskScript stores a new task and keeps its account's index.
// Keys, under the prefix KEYS[1]: t:<id> (hash: o owner, d sealed state,
// s status; expires at the end of the task's TTL) and to:<account> (zset
// id → creation ms). Index entries whose task expired are dropped first;
// at the maximum, the oldest terminal task makes room, or the answer is
// "full". ARGV: id, owner, data, status, expiry ms, creation ms, max,
// account.
var createTaskScript = redis.NewScript(strings.TrimSpace(`
local p = KEYS[1]
local id, owner, data, status = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local expires, created, max, account = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local idx = p .. 'to:' .. account
for _, tid in ipairs(redis.call('ZRANGE', idx, 0, -1)) do
  if redis.call('EXISTS', p .. 't:' .. tid) == 0 then redis.call('ZREM', idx, tid) end
end
if max > 0 and redis.call('ZCARD', idx) >= max then
  local dropped = false
  for _, tid in ipairs(redis.call('ZRANGE', idx, 0, -1)) do
    local s = redis.call('HGET', p .. 't:' .. tid, 's')
    if s == 'completed' or s == 'failed' or s == 'cancelled' then
      redis.call('DEL', p .. 't:' .. tid)
      redis.call('ZREM', idx, tid)
      dropped = true
      break
    end
  end
  if not dropped then return 'full' end
end
redis.call('HSET', p .. 't:' .. id, 'o', owner, 'd', data, 's', status)
redis.call('PEXPIREAT', p .. 't:' .. id, expires)
redis.call('ZADD', idx, created, id)
local left = redis.call('PTTL', idx)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if left < 0 or now + left < expires then redis.call('PEXPIREAT', idx, expires) end
return 'ok'
`))

// updateTaskScript writes a task's new state unless it is gone, another
// owner's, or terminal. KEYS[1]: t:<id>. ARGV: owner, data, status.
var updateTaskScript = redis.NewScript(strings.TrimSpace(`
local k = KEYS[1]
local o = redis.call('HGET', k, 'o')
if not o or o ~= ARGV[1] then return 'gone' end
local s = redis.call('HGET', k, 's')
if s == 'completed' or s == 'failed' or s == 'cancelled' then return 'terminal' end
redis.call('HSET', k, 'd', ARGV[2], 's', ARGV[3])
return 'ok'
`))

// updateHeldTaskScript is updateTaskScript only while the lease is held
// by ARGV[4]. KEYS: t:<id>, leases:l:<id>. ARGV: owner, data, status,
// holder.
var updateHeldTaskScript = redis.NewScript(strings.TrimSpace(`
if redis.call('HGET', KEYS[2], 'h') ~= ARGV[4] then return 'lost' end
local k = KEYS[1]
local o = redis.call('HGET', k, 'o')
if not o or o ~= ARGV[1] then return 'gone' end
local s = redis.call('HGET', k, 's')
if s == 'completed' or s == 'failed' or s == 'cancelled' then return 'terminal' end
redis.call('HSET', k, 'd', ARGV[2], 's', ARGV[3])
return 'ok'
`))
