package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// cmdRun calls a tool as a task and prints the task ID.
func cmdRun(ctx context.Context, c *conn, tool string, args map[string]any, ttlMs int64) error {
	params := map[string]any{
		"name":      tool,
		"arguments": args,
		"task":      map[string]any{"ttl": ttlMs}, // want MCP005
	}
	var out callOutcome
	if err := c.call(ctx, "tools/call", params, &out); err != nil {
		return err
	}
	if out.Task == nil {
		fmt.Println("completed synchronously")
		return nil
	}
	fmt.Println(out.Task.TaskID, out.Task.Status)
	return nil
}

// cmdResult waits for a task and prints its result.
func cmdResult(ctx context.Context, c *conn, id string) error {
	raw, err := c.sendRequest(ctx, "tasks/result", map[string]string{"taskId": id}) // want MCP001
	if err != nil {
		return fmt.Errorf("tasks/result(%s): %w", id, err)
	}
	_, err = os.Stdout.Write(append(raw, '\n'))
	return err
}

// cmdList prints the tasks the server knows about.
func cmdList(ctx context.Context, c *conn, w io.Writer) error {
	var page struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"tasks"`
		NextCursor string `json:"nextCursor,omitempty"`
	}
	if err := c.call(ctx, "tasks/list", nil, &page); err != nil { // want MCP002
		return err
	}
	for _, t := range page.Tasks {
		fmt.Fprintf(w, "%s\t%s\n", t.TaskID, t.Status)
	}
	return nil
}

// cmdGet prints one task.
func cmdGet(ctx context.Context, c *conn, id string) error {
	raw, err := c.sendRequest(ctx, methodGet, map[string]string{"taskId": id})
	if err != nil {
		return err
	}
	var pretty any
	_ = json.Unmarshal(raw, &pretty)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(pretty)
}

// cmdCancel cancels one task.
func cmdCancel(ctx context.Context, c *conn, id string) error {
	return c.call(ctx, methodCancel, map[string]string{"taskId": id}, nil)
}
