package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// maxDelay bounds the ms argument of the delayed tools.
const maxDelay = 24 * time.Hour

// maxAsk bounds elicit_task's count and rounds.
const maxAsk = 5

// taskTool is a tool that only runs as a task. prepare validates the
// arguments (before any task exists) and returns the function that starts
// the work on the stored task.
type taskTool struct {
	name             string
	description      string
	schema           map[string]any
	needsElicitation bool
	needsSampling    bool
	prepare          func(args json.RawMessage) (start func(s *Server, id string), err *rpc.Error)
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "echo",
		Description: "Synchronous: returns text unchanged.",
	}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})

	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	msProp := map[string]any{"type": "integer", "minimum": 0, "maximum": maxDelay.Milliseconds(),
		"description": "delay in milliseconds before the task ends"}
	obj := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required}
	}

	tools := []*taskTool{
		{
			name:        "slow_task",
			description: "Task: completes after ms milliseconds with text.",
			schema:      obj(map[string]any{"ms": msProp, "text": str("the result text")}, "ms", "text"),
			prepare: func(raw json.RawMessage) (func(*Server, string), *rpc.Error) {
				var a struct {
					Ms   *int64  `json:"ms"`
					Text *string `json:"text"`
				}
				if err := decodeArgs("slow_task", raw, &a); err != nil {
					return nil, err
				}
				if a.Text == nil {
					return nil, badArgs("slow_task", "text is required")
				}
				d, err := delay("slow_task", a.Ms, true)
				if err != nil {
					return nil, err
				}
				text := *a.Text
				return func(s *Server, id string) {
					s.schedule(id, d, func() { s.completeWith(id, text, false) })
				}, nil
			},
		},
		{
			name:        "fail_task",
			description: "Task: ends failed with a JSON-RPC error (-32603, message = reason), after optional ms.",
			schema:      obj(map[string]any{"reason": str("the error message"), "ms": msProp}, "reason"),
			prepare: func(raw json.RawMessage) (func(*Server, string), *rpc.Error) {
				reason, d, err := reasonArgs("fail_task", raw)
				if err != nil {
					return nil, err
				}
				return func(s *Server, id string) {
					s.schedule(id, d, func() {
						s.failWith(id, &jsonrpc.Error{Code: rpc.CodeInternalError, Message: reason})
					})
				}, nil
			},
		},
		{
			name:        "error_task",
			description: "Task: completes with a tool result that has isError: true (text = reason), after optional ms.",
			schema:      obj(map[string]any{"reason": str("the error text"), "ms": msProp}, "reason"),
			prepare: func(raw json.RawMessage) (func(*Server, string), *rpc.Error) {
				reason, d, err := reasonArgs("error_task", raw)
				if err != nil {
					return nil, err
				}
				return func(s *Server, id string) {
					s.schedule(id, d, func() { s.completeWith(id, reason, true) })
				}, nil
			},
		},
		{
			name: "elicit_task",
			description: "Task: asks the client question through a form elicitation {answer: string} " +
				"(input_required), then completes with the answer. Optional count asks that many questions at once " +
				"(each under its own key) and rounds repeats that with new keys; the answers are joined by newlines. " +
				"Decline or cancel ends the task with an isError result. Needs the elicitation capability.",
			schema: obj(map[string]any{
				"question": str("the question to ask"),
				"count":    map[string]any{"type": "integer", "minimum": 1, "maximum": maxAsk, "description": "questions per round (default 1)"},
				"rounds":   map[string]any{"type": "integer", "minimum": 1, "maximum": maxAsk, "description": "rounds (default 1)"},
			}, "question"),
			needsElicitation: true,
			prepare: func(raw json.RawMessage) (func(*Server, string), *rpc.Error) {
				var a struct {
					Question *string `json:"question"`
					Count    *int    `json:"count"`
					Rounds   *int    `json:"rounds"`
				}
				if err := decodeArgs("elicit_task", raw, &a); err != nil {
					return nil, err
				}
				if a.Question == nil {
					return nil, badArgs("elicit_task", "question is required")
				}
				count, rounds := 1, 1
				for _, p := range []struct {
					name string
					v    *int
					dst  *int
				}{{"count", a.Count, &count}, {"rounds", a.Rounds, &rounds}} {
					if p.v != nil {
						if *p.v < 1 || *p.v > maxAsk {
							return nil, badArgs("elicit_task", fmt.Sprintf("%s must be between 1 and %d", p.name, maxAsk))
						}
						*p.dst = *p.v
					}
				}
				e := &elicitation{question: *a.Question, count: count, rounds: rounds, index: map[string]int{}}
				return func(s *Server, id string) { e.ask(s, id) }, nil
			},
		},
		{
			name: "sample_task",
			description: "Task: asks the client for an LLM completion of prompt through sampling/createMessage " +
				"(input_required), then completes with the sampled text. Needs the sampling capability.",
			schema:        obj(map[string]any{"prompt": str("the prompt to sample")}, "prompt"),
			needsSampling: true,
			prepare: func(raw json.RawMessage) (func(*Server, string), *rpc.Error) {
				var a struct {
					Prompt *string `json:"prompt"`
				}
				if err := decodeArgs("sample_task", raw, &a); err != nil {
					return nil, err
				}
				if a.Prompt == nil {
					return nil, badArgs("sample_task", "prompt is required")
				}
				prompt := *a.Prompt
				return func(s *Server, id string) {
					s.askInput(id, "Waiting for a sampled message", "sample", "sampling/createMessage", []any{map[string]any{
						"messages": []map[string]any{{
							"role":    "user",
							"content": map[string]any{"type": "text", "text": prompt},
						}},
						"maxTokens": 256,
					}}, func(_ string, resp json.RawMessage) (func(), *rpc.Error) {
						text, err := sampledText(resp)
						if err != nil {
							return nil, err
						}
						return func() { s.completeWith(id, text, false) }, nil
					})
				}, nil
			},
		},
	}
	s.tools = map[string]*taskTool{}
	for _, tt := range tools {
		s.tools[tt.name] = tt
		// Registered so tools/list shows it; the middleware answers every
		// call before go-sdk's handler would run.
		s.mcp.AddTool(&mcp.Tool{Name: tt.name, Description: tt.description, InputSchema: tt.schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, errNotTaskTool
			})
	}
}

// elicitation drives one elicit_task: count form questions per round, for
// rounds rounds, each question under a fresh key.
type elicitation struct {
	question      string
	count, rounds int

	mu        sync.Mutex
	round     int
	remaining int
	index     map[string]int // key → answer position
	answers   []string
	done      bool
}

func (e *elicitation) ask(s *Server, id string) {
	// e.mu is held until the keys are indexed, so an answer that arrives
	// at once still finds its position (lock order: e.mu before s.mu).
	e.mu.Lock()
	defer e.mu.Unlock()
	e.round++
	e.remaining = e.count
	round := e.round
	params := make([]any, e.count)
	for i := range params {
		msg := e.question
		if e.count*e.rounds > 1 {
			msg = fmt.Sprintf("%s (%d/%d)", e.question, (round-1)*e.count+i+1, e.count*e.rounds)
		}
		params[i] = map[string]any{
			"mode":    "form",
			"message": msg,
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{"answer": map[string]any{"type": "string", "title": "Answer"}},
				"required":   []string{"answer"},
			},
		}
	}
	keys := s.askInput(id, "Waiting for an answer: "+e.question, "elicit", "elicitation/create", params,
		func(key string, resp json.RawMessage) (func(), *rpc.Error) {
			text, isErr, err := elicitAnswer(resp)
			if err != nil {
				return nil, err
			}
			return func() { e.answered(s, id, key, text, isErr) }, nil
		})
	for i, k := range keys {
		e.index[k] = (round-1)*e.count + i
	}
}

func (e *elicitation) answered(s *Server, id, key, text string, declined bool) {
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return
	}
	if declined {
		e.done = true
		e.mu.Unlock()
		s.completeWith(id, text, true)
		return
	}
	if need := e.index[key] + 1; len(e.answers) < need {
		e.answers = append(e.answers, make([]string, need-len(e.answers))...)
	}
	e.answers[e.index[key]] = text
	e.remaining--
	next, last := e.remaining == 0 && e.round < e.rounds, e.remaining == 0 && e.round == e.rounds
	if last {
		e.done = true
	}
	answer := strings.Join(e.answers, "\n")
	e.mu.Unlock()
	switch {
	case next:
		e.ask(s, id)
	case last:
		s.completeWith(id, answer, false)
	}
}

func badArgs(tool, msg string) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidParams, "invalid arguments for tool %s: %s", tool, msg)
}

// decodeArgs decodes a tool's arguments object; absent arguments are {}.
func decodeArgs(tool string, raw json.RawMessage, v any) *rpc.Error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return badArgs(tool, err.Error())
	}
	return nil
}

func delay(tool string, ms *int64, required bool) (time.Duration, *rpc.Error) {
	if ms == nil {
		if required {
			return 0, badArgs(tool, "ms is required")
		}
		return 0, nil
	}
	if *ms < 0 || *ms > maxDelay.Milliseconds() {
		return 0, badArgs(tool, fmt.Sprintf("ms must be between 0 and %d", maxDelay.Milliseconds()))
	}
	return time.Duration(*ms) * time.Millisecond, nil
}

func reasonArgs(tool string, raw json.RawMessage) (string, time.Duration, *rpc.Error) {
	var a struct {
		Reason *string `json:"reason"`
		Ms     *int64  `json:"ms"`
	}
	if err := decodeArgs(tool, raw, &a); err != nil {
		return "", 0, err
	}
	if a.Reason == nil {
		return "", 0, badArgs(tool, "reason is required")
	}
	d, err := delay(tool, a.Ms, false)
	return *a.Reason, d, err
}

// elicitAnswer reads an ElicitResult: accept → the answer; decline or
// cancel → an isError result saying so.
func elicitAnswer(resp json.RawMessage) (string, bool, *rpc.Error) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return "", false, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: inputResponses: not an ElicitResult: %v", err)
	}
	switch r.Action {
	case "accept":
		a, ok := r.Content["answer"].(string)
		if !ok {
			return "", false, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: inputResponses: accepted elicitation lacks content.answer (string)")
		}
		return a, false, nil
	case "decline", "cancel":
		return "elicitation " + r.Action + "d by the user", true, nil
	}
	return "", false, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: inputResponses: ElicitResult.action must be accept, decline or cancel")
}

// sampledText reads a CreateMessageResult and returns its text.
func sampledText(resp json.RawMessage) (string, *rpc.Error) {
	var r struct {
		Role    string          `json:"role"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(resp, &r); err != nil || r.Role == "" || len(r.Content) == 0 {
		return "", rpc.Errorf(rpc.CodeInvalidParams, "invalid params: inputResponses: not a CreateMessageResult (role, content, model)")
	}
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var blocks []block
	var one block
	if err := json.Unmarshal(r.Content, &one); err == nil {
		blocks = []block{one}
	} else if err := json.Unmarshal(r.Content, &blocks); err != nil {
		return "", rpc.Errorf(rpc.CodeInvalidParams, "invalid params: inputResponses: CreateMessageResult.content is not a content block")
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	if len(texts) == 0 {
		return "", rpc.Errorf(rpc.CodeInvalidParams, "invalid params: inputResponses: CreateMessageResult has no text content")
	}
	return strings.Join(texts, ""), nil
}
