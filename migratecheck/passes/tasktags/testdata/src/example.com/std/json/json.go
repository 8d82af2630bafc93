// Package json stands in for encoding/json (see example.com/std/context for
// why). nestedresult recognises any named []byte type called RawMessage.
package json

type RawMessage []byte
