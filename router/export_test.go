package router

import legacyface "github.com/tasksbridge/tasksbridge/face/legacy"

// LegacyBridge is the server's legacy face (tests count its parked waits).
func LegacyBridge(s *Server) *legacyface.Bridge { return s.legacy }

// RaceBuild reports a -race build (heap bounds allow for its bookkeeping).
const RaceBuild = raceBuild
