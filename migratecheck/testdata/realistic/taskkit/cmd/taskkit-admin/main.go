// Command taskkit-admin inspects and cleans up the task store of a taskkit
// server.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mark3labs/mcp-go/contrib/taskkit"
)

// describe prints how a recorded tools/call request asked to be run.
func describe(raw []byte) error {
	var req mcp.CallToolRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return err
	}
	if taskkit.HasTaskParams(req) { // want MCP005
		fmt.Printf("%s as a task, kept for %s\n", req.Params.Name, taskkit.TaskTTL(req, time.Hour)) // want MCP005
		return nil
	}
	fmt.Printf("%s synchronously\n", req.Params.Name)
	return nil
}

// drain lists every task through the router, as the admin UI did.
func drain(ctx context.Context, r *taskkit.Router) error {
	out, err := r.Handle(ctx, "tasks/list", nil) // want MCP002
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func main() {
	if len(os.Args) > 1 {
		if err := describe([]byte(os.Args[1])); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	_ = drain
}
