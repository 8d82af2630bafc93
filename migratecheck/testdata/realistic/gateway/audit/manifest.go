// Package audit signs the tool catalogue the gateway publishes and records
// every tool execution.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// ToolManifest is the canonical form of one tool that is hashed and signed
// when the catalogue is published. It is never sent as an MCP tool: it
// records what an upstream declared, including its task support, so that a
// changed declaration changes the signature.
type ToolManifest struct {
	Upstream    string `json:"upstream"`
	Tool        string `json:"tool"`
	Digest      string `json:"digest"`
	TaskSupport string `json:"taskSupport"`
}

// Hash returns the manifest's canonical digest.
func (m ToolManifest) Hash() string {
	data, _ := json.Marshal(m)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
