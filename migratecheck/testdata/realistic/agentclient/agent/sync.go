package agent

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Resync rebuilds the pending map after a reconnect from the server's list.
func (a *Agent) Resync(ctx context.Context) error {
	page, err := a.c.ListTasks(ctx, mcp.ListTasksRequest{}) // want MCP002
	if err != nil {
		return err
	}
	for _, t := range page.Tasks {
		if !t.Status.IsTerminal() {
			a.pending[t.TaskId] = "unknown"
		}
	}
	return nil
}

// NextPoll is how long to wait before the next tasks/get, from the
// server's hint.
func NextPoll(t mcp.Task) time.Duration {
	if t.PollInterval != nil { // want MCP007
		return time.Duration(*t.PollInterval) * time.Millisecond // want MCP007
	}
	return time.Second
}

// Expires says when the server will forget the task.
func Expires(t mcp.Task, created time.Time) time.Time {
	if t.TTL == nil { // want MCP006
		return time.Time{}
	}
	return created.Add(time.Duration(*t.TTL) * time.Millisecond) // want MCP006
}
