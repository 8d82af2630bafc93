package transcript

import (
	"fmt"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
)

// SchemaValidator adapts the official-schema validator to a Validator: the
// schema names "legacy" (MCP 2025-11-25), "modern" (MCP 2026-07-28 core) and
// "ext" (io.modelcontextprotocol/tasks draft) select the file, def the $defs
// entry.
func SchemaValidator(v *schemacheck.Validator) Validator {
	return func(schema, def string, msg []byte) error {
		var s schemacheck.Schema
		switch schema {
		case "legacy":
			s = schemacheck.Legacy
		case "modern":
			s = schemacheck.Modern
		case "ext":
			s = schemacheck.Ext
		default:
			return fmt.Errorf("unknown schema %q (want legacy, modern or ext)", schema)
		}
		return v.Validate(s, def, msg)
	}
}
