package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

// newBuildInfo is tasksbridge_build_info: a gauge that is always 1, whose
// labels say which build is running (internal/version), so a dashboard can
// join any series with the version that produced it and a rollout shows as
// two label sets. The values come from the binary, never from a request, so
// they are one series per process.
func newBuildInfo() prometheus.Collector {
	bi := version.Info()
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace,
		Name:      "build_info",
		Help:      "Always 1; the labels are the running bridge's version, VCS revision, dirty flag (true: built from uncommitted changes) and Go version.",
		ConstLabels: prometheus.Labels{
			"version":   bi.Version,
			"revision":  bi.Revision,
			"dirty":     strconv.FormatBool(bi.Dirty),
			"goversion": bi.GoVersion,
		},
	}, func() float64 { return 1 })
}
