package legacy

import (
	"fmt"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Helpers that patch a raw message edit it member by member
// (internal/rawjson): members that are not touched keep their exact key and
// value bytes, duplicates included.

// member is one "key": value pair of a JSON object.
type member = rawjson.Member

func parseError(what string) *rpc.Error {
	return rpc.Errorf(rpc.CodeParseError, "Parse error: %s is not valid JSON", what)
}

// objectMembers checks that data is a JSON object and splits it into members.
// Not JSON → -32700; JSON but not an object → notObjectCode.
func objectMembers(data []byte, what string, notObjectCode int64) ([]member, error) {
	if !rawjson.Valid(data) {
		return nil, parseError(what)
	}
	if !rawjson.IsObject(data) {
		return nil, rpc.Errorf(notObjectCode, "%s must be a JSON object, got %s", what, rawjson.Kind(data))
	}
	ms, err := rawjson.Members(data)
	if err != nil {
		return nil, parseError(what) // unreachable after json.Valid
	}
	return ms, nil
}

// objectOrEmpty is objectMembers that treats no bytes and null as {}.
func objectOrEmpty(data []byte, what string, notObjectCode int64) ([]member, error) {
	if rawjson.IsAbsent(data) {
		return nil, nil
	}
	return objectMembers(data, what, notObjectCode)
}

// mustMarshal encodes values this package built itself; they cannot fail.
func mustMarshal(v any) []byte {
	b, err := rawjson.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("legacy: encoding %T: %v", v, err))
	}
	return b
}
