package client

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// Conn sends JSON-RPC requests to one server.
type Conn struct {
	URL  string
	HTTP *http.Client
}

// Call sends one request and returns its raw result.
func (c *Conn) Call(method string, params any) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	resp, err := c.HTTP.Post(c.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
	}
	return out.Result, json.NewDecoder(resp.Body).Decode(&out)
}

// ListAll lists every task the server keeps.
func ListAll(c *Conn) (json.RawMessage, error) {
	return c.Call("tasks/list", nil) // want MCP002
}
