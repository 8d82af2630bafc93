// Package consts dispatches on constants declared in another file and in
// another package, through a switch and through handler tables.
package consts // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

import "example.com/shapes/consts/methods"

type handler func(params []byte) (any, error)

type server struct {
	routes map[string]handler
}

func (s *server) list(params []byte) (any, error)   { return nil, nil }
func (s *server) result(params []byte) (any, error) { return nil, nil }

func (s *server) register() {
	s.routes = map[string]handler{
		methodTasksList:     s.list,
		methods.TasksResult: s.result, // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(as a key of a`
		methods.TasksGet:    s.result,
		methodTasksCancel:   s.result,
	}
	s.routes["tasks/result"] = s.result // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(as a key of a`
}

func (s *server) dispatch(method string, params []byte) (any, error) {
	switch method {
	case methodTasksList:
		return s.list(params)
	case methodTaskStatus:
		return s.result(params)
	}
	return nil, nil
}

// labels is not a handler table (string values).
var labels = map[string]string{"tasks/result": "result", "tasks/list": "list"}
