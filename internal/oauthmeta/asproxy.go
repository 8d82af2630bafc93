package oauthmeta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// newProxy returns the reverse proxy for the 2025-03-26 authorization server
// paths: it forwards to the upstream's origin, path and query unchanged,
// with X-Forwarded-* set. Nothing is cached; responses, 404s included, pass
// through as the upstream sent them, except those of an authorization server
// the bridge fronts (rewriteASMetadata). Request bodies and the Authorization
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
			if p := pr.Out.URL.Path; p == asWellKnown || p == oidcWellKnown {
				// The metadata may be rewritten (rewriteASMetadata): ask for
				// it unencoded.
				pr.Out.Header.Del("Accept-Encoding")
			}
		},
		Transport: transport,
		ModifyResponse: func(resp *http.Response) error {
			// RFC 6749 §5.1 and RFC 7591 §3.2.1: token and registration
			// responses carry secrets and must not be stored by caches.
			p := resp.Request.URL.Path
			if rl.isTokenOrRegistration(p) && resp.Header.Get("Cache-Control") == "" {
				resp.Header.Set("Cache-Control", "no-store")
			}
			bridge, _ := resp.Request.Context().Value(bridgeOriginKey{}).(string)
			if bridge == "" {
				return nil
			}
			if p == asWellKnown || p == oidcWellKnown {
				return rl.rewriteASMetadata(resp, bridge)
			}
			rl.rewriteIss(resp, bridge)
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
	if pub := rl.public(r); pub != nil && pub.Host != "" {
		ctx = context.WithValue(ctx, bridgeOriginKey{}, (&url.URL{Scheme: pub.Scheme, Host: pub.Host}).String())
	}
	rl.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// bridgeOriginKey carries the bridge's public origin for a proxied request
// to ModifyResponse.
type bridgeOriginKey struct{}

// The 2025-03-26 arrangement is an authorization server whose issuer is the
// MCP server's origin (its metadata at that origin's RFC 8414 well-known
// URI). A client behind the bridge builds the issuer from the bridge's
// origin instead, and a 2025-11-25 or later client (go-sdk's, for one)
// compares it with the metadata's issuer (RFC 8414 §3.3) and the
// authorization response's iss (RFC 9207 §2.4). So when the upstream's
// metadata names the upstream's origin as issuer, the bridge fronts that
// authorization server whole, as a reverse proxy at another public URL
// does: the issuer and every endpoint at the upstream's origin name the
// bridge's origin, those endpoint paths are proxied (asRoutes), and the
// iss of the upstream's redirects is the bridge's. An authorization server
// with an issuer of its own is left as it is: clients reach it directly.

// rewriteASMetadata rewrites an upstream authorization server metadata
// response whose issuer is the upstream's origin (see above).
func (rl *Relay) rewriteASMetadata(resp *http.Response, bridge string) error {
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" {
		return nil
	}
	body, tooBig, err := readLimited(resp.Body, maxDocument)
	resp.Body.Close()
	if err != nil {
		return err
	}
	restore := func(b []byte) error {
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	var doc map[string]json.RawMessage
	if tooBig || json.Unmarshal(body, &doc) != nil {
		return restore(body) // not a document this relay rewrites; as sent
	}
	if _, ok := rl.front(doc, bridge); !ok {
		return restore(body)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return restore(body)
	}
	return restore(out)
}

// front rewrites doc, an authorization server metadata document, for the
// bridge at origin bridge when its issuer is the upstream's origin, records
// the issuer and endpoint paths, and returns the upstream's issuer and
// whether it did.
func (rl *Relay) front(doc map[string]json.RawMessage, bridge string) (string, bool) {
	var issuer string
	_ = json.Unmarshal(doc["issuer"], &issuer)
	up := rl.origin.String()
	if strings.TrimSuffix(issuer, "/") != up {
		return "", false
	}
	var routes []string
	for k, raw := range doc {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		switch {
		case k == "issuer":
			v = bridge
		case strings.HasPrefix(v, up+"/"):
			path := strings.TrimPrefix(v, up)
			if u, err := url.Parse(path); err == nil && u.Path != "" {
				routes = append(routes, u.Path)
			}
			v = bridge + path
		default:
			continue
		}
		b, _ := json.Marshal(v)
		doc[k] = b
	}
	rl.mu.Lock()
	changed := rl.asIssuer != issuer
	rl.asIssuer = issuer
	if rl.asRoutes == nil {
		rl.asRoutes = map[string]bool{}
	}
	for _, p := range routes {
		rl.asRoutes[p] = true
	}
	rl.mu.Unlock()
	if changed {
		rl.log.Info("oauth metadata: the upstream is its own authorization server (issuer at its origin); the bridge fronts it with its own origin as issuer and proxies its endpoints", "upstream", up)
	}
	return issuer, true
}

// asDiscoverEvery bounds how often a request for an unknown path makes the
// relay fetch the upstream's authorization server metadata.
const asDiscoverEvery = time.Minute

// discoverAS fetches the upstream's authorization server metadata to learn
// the endpoint paths of an authorization server the bridge fronts, when no
// client's metadata request taught them yet: a client that read the
// metadata through another replica, or before a restart, goes straight to
// an endpoint. At most once per asDiscoverEvery, and not once known.
func (rl *Relay) discoverAS(ctx context.Context) {
	rl.mu.Lock()
	now := rl.now()
	due := rl.asIssuer == "" && (rl.asTried.IsZero() || !now.Before(rl.asTried.Add(asDiscoverEvery)))
	if due {
		rl.asTried = now
	}
	rl.mu.Unlock()
	if !due {
		return
	}
	ch := rl.group.DoChan("as-metadata", func() (any, error) {
		fctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(fctx, http.MethodGet, rl.origin.String()+asWellKnown, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set(loopHeader, rl.loopID)
		resp, err := rl.client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, tooBig, err := readLimited(resp.Body, maxDocument)
		if err != nil || tooBig || resp.StatusCode != http.StatusOK {
			return nil, err
		}
		var doc map[string]json.RawMessage
		if json.Unmarshal(body, &doc) == nil {
			rl.front(doc, "") // only the paths count here
		}
		return nil, nil
	})
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// rewriteIss rewrites the RFC 9207 iss of a proxied redirect (the
// authorization response) from the upstream's issuer to the bridge's
// origin, once the bridge fronts that issuer.
func (rl *Relay) rewriteIss(resp *http.Response, bridge string) {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return
	}
	rl.mu.Lock()
	issuer := rl.asIssuer
	rl.mu.Unlock()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if issuer == "" || err != nil {
		return
	}
	q := loc.Query()
	if q.Get("iss") != issuer {
		return
	}
	q.Set("iss", bridge)
	loc.RawQuery = q.Encode()
	resp.Header.Set("Location", loc.String())
}

// asRoute reports whether path is an endpoint of the fronted authorization
// server (rewriteASMetadata).
func (rl *Relay) asRoute(path string) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.asRoutes[path]
}

func (rl *Relay) isTokenOrRegistration(p string) bool {
	return p == "/token" || p == "/register" || (rl.asRoute(p) && (strings.HasSuffix(p, "/token") || strings.HasSuffix(p, "/register")))
}

// OriginProxy returns a handler that proxies every request to the
// upstream's origin, path and query unchanged, like the authorization server
// paths of ProxyAuthServer. An upstream with a built-in 2025-03-26
// authorization server may send the browser on to pages of its own (a login
// form, its assets) at paths no specification names; when the bridge took
// over the upstream's public URL, the edge mounts this handler at "/" so
// those paths still reach it. It works whether or not ProxyAuthServer is set.
func (rl *Relay) OriginProxy() http.Handler { return http.HandlerFunc(rl.serveProxy) }
