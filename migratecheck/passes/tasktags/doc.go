// Package tasktags defines an Analyzer for rule R2 of the rules catalogue:
// the legacy Task fields ttl (MCP006) and pollInterval (MCP007) in JSON
// struct tags of task-shaped wire structs, and the request-side TaskMetadata
// shape {ttl} (MCP005).
//
// # Analyzer tasktags
//
// tasktags: find legacy ttl/pollInterval json tags in task-shaped structs
//
// A struct type (named or anonymous) is task-shaped when its JSON keys
// (including keys promoted from untagged embedded structs) contain taskId and
// status plus one of createdAt, lastUpdatedAt, statusMessage or ttl. Only in
// such structs are json:"ttl…" and json:"pollInterval…" reported, so
// Kubernetes-style pollInterval fields and storage records without taskId
// are not. A struct that already carries ttlMs (or pollIntervalMs) next to
// the legacy key is a deliberate dual-emit shape and is not reported. A
// struct whose only JSON key is ttl and that is the type of a field tagged
// json:"task" is the legacy per-request task parameter: its ttl is MCP005.
// DynamoDB attributes are storage, not wire: a field tagged dynamodbav:"ttl"
// (the table's expiry attribute), and the pollInterval attribute of a
// DynamoDB record (every field has a dynamodbav or dynamo tag).
//
// The opt-in fix (-migratecheck.fix-tags) inserts "Ms" after the json name
// ("ttl" → "ttlMs", "pollInterval" → "pollIntervalMs"). It is offered only
// when every tag on the struct has the json key alone (no db, bson,
// dynamodbav, theorydb, yaml … keys: a storage record must keep its column
// names) and the package does not also serve 2025-11-25 (no server-side R1
// hit, no library task-engine use). The message says when and why no fix is
// offered.
package tasktags
