package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric names the rollout reads (see ops/metrics and docs/METRICS.md).
const (
	mClientRequests = "tasksbridge_client_requests_total"
	mClientLastSeen = "tasksbridge_client_last_seen_timestamp_seconds"
	mLegacyCalls    = "tasksbridge_legacy_calls_total"
	mRequests       = "tasksbridge_requests_total"
	mTasksCreated   = "tasksbridge_tasks_created_total"
	// mPolls has no labels, so every bridge exports it from start-up: its
	// presence tells a tasksbridge /metrics (and a scraped replica) apart.
	mPolls = "tasksbridge_upstream_polls_total"
)

// maxBody bounds what is read from a /metrics page or a Prometheus answer.
const maxBody = 64 << 20

// FromMetricsText reads one bridge's /metrics page (Prometheus text
// exposition format). Counters are totals since the bridge started.
func FromMetricsText(source string, r io.Reader) (Data, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Data{}, fmt.Errorf("%s: not a Prometheus text exposition: %w", source, err)
	}
	if _, ok := fams[mPolls]; !ok {
		return Data{}, fmt.Errorf("%s: no %s: not a tasksbridge /metrics page", source, mPolls)
	}
	samples := func(name string, labels ...string) []Sample {
		mf := fams[name]
		if mf == nil {
			return nil
		}
		var out []Sample
		for _, m := range mf.Metric {
			s := Sample{Labels: map[string]string{}, Value: metricValue(m)}
			for _, lp := range m.Label {
				for _, want := range labels {
					if lp.GetName() == want {
						s.Labels[want] = lp.GetValue()
					}
				}
			}
			out = append(out, s)
		}
		return out
	}
	return Data{
		Source:         source,
		Replicas:       1,
		ClientRequests: samples(mClientRequests, "era", "client", "version"),
		ClientLastSeen: samples(mClientLastSeen, "era", "client", "version"),
		LegacyCalls:    samples(mLegacyCalls, "client", "method"),
		Requests:       samples(mRequests, "client_era", "method"),
		TasksCreated:   samples(mTasksCreated, "direction"),
	}, nil
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// FetchMetrics GETs one bridge's /metrics page and reads it.
func FetchMetrics(ctx context.Context, hc *http.Client, metricsURL string) (Data, error) {
	u, err := parseURL(metricsURL)
	if err != nil {
		return Data{}, err
	}
	name := u.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Data{}, fmt.Errorf("metrics URL %s: %w", name, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		return Data{}, fmt.Errorf("cannot reach bridge metrics at %s: %w", name, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Data{}, fmt.Errorf("bridge metrics at %s: HTTP %s", name, resp.Status)
	}
	return FromMetricsText(name, io.LimitReader(resp.Body, maxBody))
}

// FetchAllMetrics reads the /metrics page of every replica and sums them
// ([Merge]): each bridge counts only the requests it served, so with several
// replicas behind a load balancer one page alone under-counts, and may call a
// bridge removable while another replica still serves legacy clients. Every
// URL must answer (a replica left out would be the same mistake), and a URL
// given twice is refused rather than counted twice.
func FetchAllMetrics(ctx context.Context, hc *http.Client, metricsURLs []string) (Data, error) {
	if len(metricsURLs) == 0 {
		return Data{}, errors.New("no metrics URL given")
	}
	seen := map[string]bool{}
	for _, raw := range metricsURLs {
		u, err := parseURL(raw)
		if err != nil {
			return Data{}, err
		}
		if seen[u.String()] {
			return Data{}, fmt.Errorf("metrics URL %s is given twice: each replica's /metrics must be named once, or its counts would be added twice", u.Redacted())
		}
		seen[u.String()] = true
	}
	ds := make([]Data, len(metricsURLs))
	errs := make([]error, len(metricsURLs))
	var wg sync.WaitGroup
	for i, raw := range metricsURLs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds[i], errs[i] = FetchMetrics(ctx, hc, raw)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Data{}, err
	}
	return Merge(ds...), nil
}

// Merge sums the data of several replicas' /metrics pages: samples are
// concatenated, and [Decide] adds counters of equal labels and keeps the
// latest last-seen time, which is the sum over the fleet. Sources are listed
// in order; Replicas is the total.
func Merge(ds ...Data) Data {
	if len(ds) == 1 {
		return ds[0]
	}
	var out Data
	sources := make([]string, 0, len(ds))
	for _, d := range ds {
		sources = append(sources, d.Source)
		out.Replicas += d.Replicas
		out.ClientRequests = append(out.ClientRequests, d.ClientRequests...)
		out.ClientLastSeen = append(out.ClientLastSeen, d.ClientLastSeen...)
		out.LegacyCalls = append(out.LegacyCalls, d.LegacyCalls...)
		out.Requests = append(out.Requests, d.Requests...)
		out.TasksCreated = append(out.TasksCreated, d.TasksCreated...)
	}
	out.Source = strings.Join(sources, ", ")
	return out
}

// Queries returns the PromQL instant queries QueryPrometheus runs for a
// window (a Prometheus duration such as "7d"), by the Data field they fill.
func Queries(window string) map[string]string {
	inc := func(by, metric string) string {
		return fmt.Sprintf("sum by (%s) (increase(%s[%s]))", by, metric, window)
	}
	return map[string]string{
		"ClientRequests": inc("client, version, era", mClientRequests),
		"ClientLastSeen": fmt.Sprintf("max by (client, version, era) (max_over_time(%s[%s]))", mClientLastSeen, window),
		"LegacyCalls":    inc("client, method", mLegacyCalls),
		"Requests":       inc("client_era, method", mRequests),
		"TasksCreated":   inc("direction", mTasksCreated),
		"Replicas":       fmt.Sprintf("count(max_over_time(%s[%s]))", mPolls, window),
	}
}

// QueryPrometheus asks a Prometheus server (HTTP API, /api/v1/query) for the
// rollout figures of every scraped bridge over window.
func QueryPrometheus(ctx context.Context, hc *http.Client, promURL, window string) (Data, error) {
	if _, err := model.ParseDuration(window); err != nil || strings.HasPrefix(window, "0") {
		return Data{}, fmt.Errorf("window %q: want a Prometheus duration such as 7d, 24h or 30m", window)
	}
	u, err := parseURL(promURL)
	if err != nil {
		return Data{}, err
	}
	name := u.Redacted()
	d := Data{Source: name, Window: window}
	qs := Queries(window)
	for _, field := range []string{"Replicas", "ClientRequests", "ClientLastSeen", "LegacyCalls", "Requests", "TasksCreated"} {
		samples, err := instantQuery(ctx, hc, u, qs[field])
		if err != nil {
			return Data{}, err
		}
		switch field {
		case "Replicas":
			if len(samples) == 0 || samples[0].Value <= 0 {
				return Data{}, fmt.Errorf("Prometheus at %s has no %s over the last %s: is the bridge scraped?", name, mPolls, window)
			}
			d.Replicas = int(samples[0].Value)
		case "ClientRequests":
			d.ClientRequests = samples
		case "ClientLastSeen":
			d.ClientLastSeen = samples
		case "LegacyCalls":
			d.LegacyCalls = samples
		case "Requests":
			d.Requests = samples
		case "TasksCreated":
			d.TasksCreated = samples
		}
	}
	return d, nil
}

// promResponse is the envelope of the Prometheus HTTP API.
type promResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

func instantQuery(ctx context.Context, hc *http.Client, base *url.URL, query string) ([]Sample, error) {
	name := base.Redacted()
	u := base.JoinPath("api", "v1", "query")
	u.RawQuery = url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("Prometheus URL %s: %w", name, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Prometheus at %s: %w", name, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("Prometheus at %s: reading the answer to %s: %w", name, query, err)
	}
	var pr promResponse
	if err := json.Unmarshal(body, &pr); err != nil {
		return nil, fmt.Errorf("Prometheus at %s: HTTP %s, not a Prometheus API answer to %s: %w", name, resp.Status, query, err)
	}
	if pr.Status != "success" {
		return nil, fmt.Errorf("Prometheus at %s: query %s failed: %s: %s", name, query, pr.ErrorType, pr.Error)
	}
	if pr.Data.ResultType != "vector" {
		return nil, fmt.Errorf("Prometheus at %s: query %s: result type %q, want vector", name, query, pr.Data.ResultType)
	}
	out := make([]Sample, 0, len(pr.Data.Result))
	for _, r := range pr.Data.Result {
		s, ok := r.Value[1].(string)
		if !ok {
			return nil, fmt.Errorf("Prometheus at %s: query %s: sample value %v is not a string", name, query, r.Value[1])
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("Prometheus at %s: query %s: sample value %q: %w", name, query, s, err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out, nil
}

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not an http(s) URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s is not an http(s) URL", u.Redacted())
	}
	return u, nil
}

// unwrapURLError drops *url.Error's "Get <url>:" prefix (the caller names
// the URL itself, without credentials).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
