package oauthmeta

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httputil"
)

// newProxy returns the reverse proxy for the 2025-03-26 authorization server
// paths: it forwards to the upstream's origin, path and query unchanged,
// with X-Forwarded-* set. Nothing is cached; responses, 404s included, pass
// through as the upstream sent them. Request bodies and the Authorization
// header (client credentials on /token, RFC 6749 §2.3.1) are forwarded and
// never logged.
func (rl *Relay) newProxy() *httputil.ReverseProxy {
	transport := rl.client.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	origin := rl.origin
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(origin)
			pr.SetXForwarded()
		},
		Transport: transport,
		ModifyResponse: func(resp *http.Response) error {
			// RFC 6749 §5.1 and RFC 7591 §3.2.1: token and registration
			// responses carry secrets and must not be stored by caches.
			if p := resp.Request.URL.Path; (p == "/token" || p == "/register") && resp.Header.Get("Cache-Control") == "" {
				resp.Header.Set("Cache-Control", "no-store")
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			rl.log.Warn("oauth metadata: the upstream's authorization server path did not answer", "path", r.URL.Path, "reason", gist(err))
			writeJSONError(w, http.StatusBadGateway, "temporarily_unavailable",
				"the bridge could not reach the upstream's authorization server at "+origin.String()+": "+gist(err))
		},
		ErrorLog: slog.NewLogLogger(rl.log.Handler(), slog.LevelWarn),
	}
}

func (rl *Relay) serveProxy(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), proxyTimeout)
	defer cancel()
	rl.proxy.ServeHTTP(w, r.WithContext(ctx))
}
