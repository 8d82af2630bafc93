package audit

import "time"

// ToolExecution is one row of the execution log: which tool ran for whom,
// and how it ended. It has nothing to do with MCP tool execution hints.
type ToolExecution struct {
	ID       string        `json:"id"`
	ToolName string        `json:"toolName"`
	Status   string        `json:"status"`
	Caller   string        `json:"caller"`
	Took     time.Duration `json:"took"`
}

// Log collects executions in memory until they are flushed.
type Log struct {
	entries []ToolExecution
}

// Add records one execution.
func (l *Log) Add(e ToolExecution) { l.entries = append(l.entries, e) }

// Failed returns the executions that did not succeed.
func (l *Log) Failed() []ToolExecution {
	var out []ToolExecution
	for _, e := range l.entries {
		if e.Status != "ok" {
			out = append(out, e)
		}
	}
	return out
}
