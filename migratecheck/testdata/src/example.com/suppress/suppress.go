// Package suppress exercises the suppression directives.
package suppress

import "github.com/mark3labs/mcp-go/mcp"

//migrate-check:file-ignore MCP009 tool declarations are reviewed separately

func used() {
	_ = mcp.MethodTasksResult //migrate-check:ignore MCP001 legacy client kept for 2025-11-25 peers
	//migrate-check:ignore MCP002,MCP001 both kept until every peer runs 2026-07-28
	_ = mcp.MethodTasksList
	_ = mcp.TaskSupportRequired // suppressed by the file-ignore
	//lint:ignore MCP012 staticcheck spelling
	var c mcp.CancelTaskResult
	_ = mcp.WithTaskTTL(3)          //nolint:migratecheck // legacy store
	_ = mcp.WithTaskPollInterval(3) //nolint
	//lint:ignore SA1019 a staticcheck directive: not ours, never reported
	_ = mcp.NewTask("x")
	_ = c
}

func malformed() {
	//migrate-check:ignore MCP001 // want `malformed directive: //migrate-check:ignore MCP001 is missing the required reason`
	_ = mcp.TaskResultRequest{} // want `mcp.TaskResultRequest belongs to the removed tasks/result method`

	//migrate-check:ignore MCP099 typo in the rule // want `directive names unknown rule "MCP099"`
	_ = mcp.TaskResultParams{} // want `mcp.TaskResultParams belongs`

	//migrate-check:ignore // want `malformed directive: //migrate-check:ignore needs a rule list and a reason`

	//migrate-check:ignroe MCP001 misspelt // want `unknown directive "migrate-check:ignroe MCP001 misspelt"`

	//lint:ignore MCP001 // want `malformed directive: //lint:ignore MCP001 is missing the required reason`
	_ = mcp.ParseTaskResultResult // want `mcp.ParseTaskResultResult belongs`
}

func unused() {
	//migrate-check:ignore MCP006 nothing here to suppress // want `this directive matched nothing; remove it\? \(//migrate-check:ignore MCP006 nothing here to suppress\) \[warning\]$`
	_ = mcp.NewTask("y")

	//lint:ignore MCP003,SA1019 mixed list, nothing to suppress // want `this directive matched nothing`
	_ = mcp.NewTask("z")

	//nolint:migratecheck // never reported as unused
	_ = mcp.NewTask("w")
}
