// Package protocol declares method-name constants used by raw/r1 from
// another package (R1 position 5 across packages).
package protocol // want `^note: the package still serves 2025-11-25 peers \(it declares their`

const (
	MethodTasksResult = "tasks/result"
	MethodTasksGet    = "tasks/get"
)

// Request is a JSON-RPC request.
type Request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}
