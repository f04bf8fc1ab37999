package backend

import (
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// taskStatus is what both task channels (taskConn, httpTasks) share: the
// ids of the gateway's own requests, and the tasks whose
// notifications/tasks/status someone waits for.
type taskStatus struct {
	next atomic.Uint64

	mu       sync.Mutex
	watchers map[string]chan struct{} // task id → poked on notifications/tasks/status
}

// nextID returns a fresh id for a request of the gateway's: a string, so
// that it never collides with the SDK's integer ids.
func (s *taskStatus) nextID() (string, jsonrpc.ID, error) {
	id := taskRequestPrefix + strconv.FormatUint(s.next.Add(1), 10)
	jid, err := jsonrpc.MakeID(id)
	return id, jid, err
}

// watch returns a channel poked each time the backend sends
// notifications/tasks/status for taskID, until stop.
func (s *taskStatus) watch(taskID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers == nil {
		s.watchers = map[string]chan struct{}{}
	}
	s.watchers[taskID] = ch
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.watchers, taskID)
		s.mu.Unlock()
	}
}

// notified pokes the watcher of the task a notifications/tasks/status
// (its params) is about, if any.
func (s *taskStatus) notified(params json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	if ch := s.watchers[p.TaskID]; ch != nil {
		poke(ch)
	}
	s.mu.Unlock()
}
