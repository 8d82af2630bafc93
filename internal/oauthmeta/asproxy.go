package oauthmeta

import (
	"context"
	"errors"
	"fmt"
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
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeJSONError(w, http.StatusRequestEntityTooLarge, "invalid_request",
					fmt.Sprintf("the request body is larger than %d KiB", maxProxiedBody>>10))
				return
			}
			rl.log.Warn("oauth metadata: the upstream's authorization server path did not answer", "path", r.URL.Path, "reason", gist(err))
			writeJSONError(w, http.StatusBadGateway, "temporarily_unavailable",
				"the bridge could not reach the upstream's authorization server at "+origin.String()+": "+gist(err))
		},
		ErrorLog: slog.NewLogLogger(rl.log.Handler(), slog.LevelWarn),
	}
}

// maxProxiedBody bounds a proxied request body: token, registration and
// login form requests are a few hundred bytes.
const maxProxiedBody = 1 << 20

func (rl *Relay) serveProxy(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), proxyTimeout)
	defer cancel()
	if r.ContentLength > maxProxiedBody {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "invalid_request",
			fmt.Sprintf("the request body is larger than %d KiB", maxProxiedBody>>10))
		return
	}
	if r.Body != nil {
		// A body of unknown length is cut at the limit while it streams.
		r.Body = http.MaxBytesReader(w, r.Body, maxProxiedBody)
	}
	rl.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// OriginProxy returns a handler that proxies every request to the
// upstream's origin, path and query unchanged, like the authorization server
// paths of ProxyAuthServer. An upstream with a built-in 2025-03-26
// authorization server may send the browser on to pages of its own (a login
// form, its assets) at paths no specification names; when the bridge took
// over the upstream's public URL, the edge mounts this handler at "/" so
// those paths still reach it. It works whether or not ProxyAuthServer is set.
func (rl *Relay) OriginProxy() http.Handler { return http.HandlerFunc(rl.serveProxy) }
