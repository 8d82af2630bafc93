// Package rpc is the JSON-RPC error vocabulary shared by both protocol eras: the
// standard codes, the MCP-specific codes, and helpers that build and inspect
// *jsonrpc.Error values (go-sdk's wire error type) so that every decoder and
// translator can hand a face an error that already carries the code to answer with.
package rpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error is go-sdk's JSON-RPC wire error: {code, message, data?}.
type Error = jsonrpc.Error

// Standard JSON-RPC 2.0 codes.
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603
)

// MCP codes. The -32020..-32022 block is 2026-07-28 (M-38, M-45, M-51, M-67);
// -32002 is the 2025-11-25 "resource not found" that 2026 servers must not emit.
const (
	CodeLegacyResourceNotFound          int64 = -32002
	CodeHeaderMismatch                  int64 = -32020
	CodeMissingRequiredClientCapability int64 = -32021
	CodeUnsupportedProtocolVersion      int64 = -32022
)

// Errorf returns a *Error with the given code and a formatted message.
func Errorf(code int64, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// WithData returns a *Error whose data is the JSON encoding of data.
// A value that cannot be encoded is a programming error; the error is then
// returned without data rather than with invalid JSON (go-sdk never answers a
// message whose JSON is invalid).
func WithData(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
}

// CodeOf reports the JSON-RPC code a face should answer err with: the code of
// the first *Error in err's chain, or CodeInternalError for anything else.
func CodeOf(err error) int64 {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Code
	}
	return CodeInternalError
}

// As returns err as a *Error: the one in its chain if present, otherwise a
// CodeInternalError wrapping err's text. It returns nil for a nil err.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
