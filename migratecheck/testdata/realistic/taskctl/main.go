// Command taskctl is a small operator CLI for MCP servers that run tools as
// tasks: run, get, result, list, cancel and watch.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
)

const usage = `usage: taskctl [-url URL] COMMAND
  run TOOL        call TOOL as a task (tools/call with a task TTL)
  get ID          print the task (tasks/get)
  result ID       wait for the task and print its result (tasks/result)
  list            list tasks (tasks/list)
  cancel ID       cancel the task (tasks/cancel)
`

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/mcp", "server URL")
	flag.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	flag.Parse()
	c := &conn{url: *url, http: http.DefaultClient}
	ctx := context.Background()
	var err error
	switch flag.Arg(0) {
	case "run":
		err = cmdRun(ctx, c, flag.Arg(1), map[string]any{}, 60_000)
	case "get":
		err = cmdGet(ctx, c, flag.Arg(1))
	case "result":
		err = cmdResult(ctx, c, flag.Arg(1)) // want MCP001
	case "list":
		err = cmdList(ctx, c, os.Stdout) // want MCP002
	case "cancel":
		err = cmdCancel(ctx, c, flag.Arg(1))
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "taskctl %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
}

var _ = printEvent
