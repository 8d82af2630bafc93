package legacyface

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/translate"
)

// sideIDs mints the identifiers translate needs for side requests:
// URL-elicitation ids (unique) and request ids (go-sdk assigns the real
// JSON-RPC ids, non-null and never reused in a session, L-84).
var sideIDs = translate.IDFunc(randomID)

// presentIDs mints the ids of the side request that presents input key of
// task taskID: the same ids each time the same question is presented (after
// a resumed stream, on any replica), so a late answer to the first copy
// still matches and the client sees one question, not two (a question
// re-sent keeps its JSON-RPC id). They derive from the task id,
// 128 random bits the session's client already holds, so no one else can
// guess them; distinct keys or tasks never share one (L-84).
func presentIDs(taskID, key string) translate.IDSource {
	n := 0
	return translate.IDFunc(func() string {
		n++
		h := sha256.Sum256([]byte(taskID + "\x00" + key + "\x00" + strconv.Itoa(n)))
		return base64.RawURLEncoding.EncodeToString(h[:16])
	})
}

// ask sends one legacy server→client request (elicitation/create,
// sampling/createMessage or roots/list) through go-sdk with ctx, which routes
// it onto the stream of the request being handled (the tasks/result stream,
// L-46), and returns the client's answer as a whole JSON-RPC
// response, the shape translate.InputResponseFromLegacy reads. A context
// error means nobody got an answer: the caller may ask again later.
func (s *session) ask(ctx context.Context, side translate.SideRequest) ([]byte, error) {
	if ri := reqInfoFrom(ctx); ri != nil && ri.out != nil {
		return s.askLean(ctx, ri, side)
	}
	ss := s.serverSession()
	if ss == nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: session not ready")
	}
	params := side.Request.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	var (
		res any
		err error
	)
	switch side.Request.Method {
	case legacy.MethodElicitationCreate:
		var p mcp.ElicitParams
		if err = json.Unmarshal(params, &p); err == nil {
			res, err = ss.Elicit(ctx, &p)
		}
	case legacy.MethodSamplingCreateMessage:
		var probe struct {
			Tools json.RawMessage `json:"tools"`
		}
		_ = json.Unmarshal(params, &probe)
		if len(probe.Tools) > 0 {
			var p mcp.CreateMessageWithToolsParams
			if err = json.Unmarshal(params, &p); err == nil {
				res, err = ss.CreateMessageWithTools(ctx, &p)
			}
		} else {
			var p mcp.CreateMessageParams
			if err = json.Unmarshal(params, &p); err == nil {
				res, err = ss.CreateMessage(ctx, &p)
			}
		}
	case legacy.MethodRootsList:
		var p mcp.ListRootsParams
		if err = json.Unmarshal(params, &p); err == nil {
			res, err = ss.ListRoots(ctx, &p)
		}
	default:
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: cannot send %s to a client", side.Request.Method)
	}
	id := json.RawMessage(side.Request.ID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			we = rpc.Errorf(rpc.CodeInternalError, "%v", err)
		}
		return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": we})
	}
	result, err := json.Marshal(res)
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: encode the client's answer: %v", err)
	}
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": json.RawMessage(result)})
}
