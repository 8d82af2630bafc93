// Package server is a test stub of github.com/panyam/mcpkit/server.
package server

type Server struct{}

func NewServer(name string) *Server { return &Server{} }

func (s *Server) RegisterExtension(id string, settings map[string]any) {}

type TasksConfigV1 struct {
	Server *Server
}

func RegisterTasksV1(cfg TasksConfigV1) {}
