package metrics

// UpstreamUp sets tasksbridge_upstream_up: 1 when the last request to the
// upstream got an answer (any JSON-RPC answer, or a 401/403 refusal of the
// credentials), 0 when it could not be reached (transport failure, timeout,
// TLS). The gauge has no labels, so neither the reason nor an id can end up
// in one (the reason is in /readyz's body and the log). The bridge keeps
// serving stored results while the upstream is down, so this is a signal for
// alerts and dashboards, not for readiness.
func (m *Metrics) UpstreamUp(up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.upstreamUp.WithLabelValues().Set(v)
}
