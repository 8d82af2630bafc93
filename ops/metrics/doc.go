// Package metrics is the bridge's Prometheus instrumentation: every collector
// of the rollout-tracking contract (docs/METRICS.md), registered once
// on a registry owned by a [Metrics] value, behind small typed methods that the
// faces, upstream adapters, watchers and store callers call.
//
// Metric names and labels are a contract: dashboards (docs/grafana) and
// `bridge rollout` depend on them. Every label value comes from a fixed set
// (eras, MCP method names, outcomes, code buckets, statuses, store ops) or
// from a bounded, sanitised clientInfo table, so no label can carry a task id,
// session id or secret, and cardinality is bounded (docs/ARCHITECTURE.md, No
// secret or id in logs and labels).
// No method takes an id.
//
// # Usage
//
// Build one Metrics per bridge process and serve its handler:
//
//	m := metrics.New(metrics.Options{})          // 24h client window, 50 client names
//	mux.Handle("/metrics", m.Handler())
//
// A face records each client request once it has answered it:
//
//	m.ObserveCall(metrics.Call{
//		ClientEra:   metrics.EraLegacy,          // the face's era
//		UpstreamEra: metrics.EraModern,
//		Method:      "tasks/result",
//		Err:         err,                        // nil → ok; *rpc.Error → its code; see OutcomeOf
//		ClientName:  info.Name, ClientVersion: info.Version,
//		Legacy:      true,                       // a legacy task-protocol call (see LegacyCall)
//	})
//
// or the same in parts: m.Request(clientEra, upstreamEra, method, outcome),
// m.ClientSeen(era, name, version), m.LegacyCall(method, name). Tasks and
// sessions:
//
//	m.TaskCreated(metrics.Direction(metrics.EraLegacy, metrics.EraModern), metrics.OriginSynthesized)
//	m.TaskTransition("", "working")            // then ("working", "completed"), ...
//	m.SessionOpened(metrics.EraLegacy)         // and SessionClosed
//	m.ObserveResultWait(time.Since(start))     // a legacy tasks/result wait
//	m.InputRequest("elicitation/create", metrics.OutcomeOf(err))
//
// Upstream adapters and watchers:
//
//	m.UpstreamRequest("tasks/get", err, time.Since(start))
//	m.UpstreamPoll()
//
// Store calls are timed by wrapping them (sessionmap does not import
// Prometheus; m.StoreOp also fits a func(string, func() error) error hook):
//
//	err := m.StoreOp("create_task", func() error { return store.CreateTask(ctx, t) })
//
// Every method is a no-op on a nil *Metrics.
package metrics
