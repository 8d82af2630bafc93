package oauthmeta

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"
)

const (
	// DefaultTTL is the longest the relay keeps the upstream's metadata
	// document, whatever max-age the upstream's Cache-Control allows.
	DefaultTTL = 60 * time.Second
	// maxDocument bounds a fetched metadata document; real ones are a few
	// hundred bytes.
	maxDocument = 64 << 10
	// fetchTimeout bounds one upstream metadata fetch, whoever waits for it.
	fetchTimeout = 10 * time.Second
	// proxyTimeout bounds one proxied authorization server exchange.
	proxyTimeout = 30 * time.Second
	// loopHeader marks the relay's own metadata fetches, so that an upstream
	// whose challenge points back at the bridge is noticed instead of the
	// relay waiting for itself.
	loopHeader = "Tasksbridge-Metadata-Fetch"
)

// Config configures a Relay.
type Config struct {
	// Upstream is the upstream's MCP endpoint URL. Required.
	Upstream *url.URL
	// Client fetches the upstream's metadata and, through its Transport,
	// carries the proxied authorization server requests. Default: a client
	// with a 10 s timeout over http.DefaultTransport.
	Client *http.Client
	// PublicURL returns the bridge's public MCP endpoint URL for r: the URL
	// the client dialed, which the served metadata names as its resource
	// (RFC 9728 §3.3). The request edge provides it. Default: the request's
	// scheme and Host with the path /mcp.
	PublicURL func(*http.Request) *url.URL
	// TTL caps how long the upstream's document is kept. The lifetime is
	// the upstream's Cache-Control max-age; without one (or with no-store
	// or no-cache) the document is not kept at all. Default DefaultTTL.
	TTL time.Duration
	// ProxyAuthServer also proxies the 2025-03-26 authorization server
	// paths (metadata, /authorize, /token, /register) to the upstream's origin.
	ProxyAuthServer bool
	// Logger receives state changes and refusals. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock (tests drive it). Default time.Now.
	Now func() time.Time
}

// Relay serves the upstream's OAuth discovery documents at the bridge's
// URLs. It is an http.Handler for the patterns Patterns returns.
type Relay struct {
	upstream *url.URL
	origin   *url.URL
	client   *http.Client
	public   func(*http.Request) *url.URL
	ttl      time.Duration
	log      *slog.Logger
	now      func() time.Time
	loopID   string
	proxy    *httputil.ReverseProxy // to the upstream's origin
	proxyAS  bool                   // Config.ProxyAuthServer

	group singleflight.Group

	mu     sync.Mutex
	learnt string                // resource_metadata URL from an upstream challenge
	badURL string                // last unusable resource_metadata, logged once
	cache  map[string]cacheEntry // by the first URL tried
	state  string                // last outcome, to log changes only

	asIssuer string          // the upstream issuer the bridge fronts (asproxy.go)
	asRoutes map[string]bool // its endpoint paths the bridge proxies
	asTried  time.Time       // last discoverAS
}

type cacheEntry struct {
	doc      map[string]json.RawMessage // nil: the upstream has none
	source   string
	mismatch string // the document's resource when it is not the upstream's URL
	expires  time.Time
}

// New returns a Relay for cfg.
func New(cfg Config) *Relay {
	rl := &Relay{
		upstream: cfg.Upstream,
		client:   cfg.Client,
		public:   cfg.PublicURL,
		ttl:      cfg.TTL,
		log:      cfg.Logger,
		now:      cfg.Now,
		cache:    map[string]cacheEntry{},
	}
	if rl.upstream == nil {
		rl.upstream = &url.URL{}
	}
	rl.origin = &url.URL{Scheme: rl.upstream.Scheme, Host: rl.upstream.Host}
	if rl.client == nil {
		rl.client = &http.Client{Timeout: fetchTimeout}
	}
	if rl.public == nil {
		rl.public = defaultPublicURL
	}
	if rl.ttl <= 0 {
		rl.ttl = DefaultTTL
	}
	if rl.log == nil {
		rl.log = slog.Default()
	}
	if rl.now == nil {
		rl.now = time.Now
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	rl.loopID = hex.EncodeToString(id[:])
	rl.proxyAS = cfg.ProxyAuthServer
	rl.proxy = rl.newProxy()
	return rl
}

func defaultPublicURL(r *http.Request) *url.URL {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: r.Host, Path: "/mcp"}
}

// asPaths are the 2025-03-26 authorization server paths at the MCP server's
// origin: RFC 8414 metadata, its OpenID Connect sibling (clients of later
// revisions also try it), and the default endpoints a client falls back to
// when there is no metadata.
var asPaths = []string{asWellKnown, oidcWellKnown, "/authorize", "/token", "/register"}

// Patterns returns the http.ServeMux patterns to route to the relay: the
// protected resource metadata well-known URI, root and path-suffixed
// (RFC 9728 §3.1), and, with ProxyAuthServer, the authorization server paths.
func (rl *Relay) Patterns() []string {
	p := []string{prmWellKnown, prmWellKnown + "/"}
	if rl.proxyAS {
		// "/" reaches the endpoints of an authorization server the bridge
		// fronts (asproxy.go), wherever its metadata puts them; other
		// paths get a 404.
		p = append(p, asPaths...)
		p = append(p, "/")
	}
	return p
}

// ServeHTTP serves the relay's paths; any other path is a 404.
func (rl *Relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == prmWellKnown || strings.HasPrefix(path, prmWellKnown+"/") {
		rl.servePRM(w, r, strings.TrimPrefix(path, prmWellKnown))
		return
	}
	if rl.proxyAS {
		for _, p := range asPaths {
			if path == p {
				rl.serveProxy(w, r)
				return
			}
		}
		if !rl.asRoute(path) {
			rl.discoverAS(r.Context())
		}
		if rl.asRoute(path) {
			rl.serveProxy(w, r)
			return
		}
	}
	writeJSONError(w, http.StatusNotFound, "not_found", "the bridge serves no OAuth document at "+path)
}

// Learn records the resource_metadata URL (RFC 9728 §5.1) of the first
// Bearer challenge in challenges, an upstream's WWW-Authenticate values, as
// where to fetch the upstream's metadata from; the well-known URIs are only
// the fallback (MCP 2025-06-18 and later). The edge calls it with every
// upstream refusal it relays (RelayAuthError does).
func (rl *Relay) Learn(challenges []string) { rl.learn(challenges, "") }

// learn is Learn, ignoring a resource_metadata equal to self (the bridge's
// own metadata URL): an upstream behind a bridge that took over its public
// URL names the bridge's document, and the relay must not fetch from itself.
func (rl *Relay) learn(challenges []string, self string) {
	// A refusal is when a client discovers again: it fetches the metadata
	// and follows its authorization_servers. Directly it would read the
	// upstream's current document, so the relay must not answer from a
	// copy taken before the refusal (an upstream that moved to another
	// authorization server refuses the old one's tokens).
	rl.mu.Lock()
	clear(rl.cache)
	rl.mu.Unlock()
	v, ok := bearerParam(challenges, resourceMetadataParam)
	if !ok || v == self {
		return
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		rl.mu.Lock()
		first := rl.badURL != v
		rl.badURL = v
		rl.mu.Unlock()
		if first {
			rl.log.Warn("oauth metadata: ignoring the upstream's resource_metadata, it is not an absolute http(s) URL; using the well-known URIs")
		}
		return
	}
	u.Fragment, u.RawFragment = "", ""
	s := u.String()
	rl.mu.Lock()
	changed := rl.learnt != s
	rl.learnt = s
	rl.mu.Unlock()
	if changed {
		rl.log.Info("oauth metadata: the upstream names its protected resource metadata in its challenge; fetching it from there", "url", s)
	}
}

// RelayAuthError relays e, an upstream refusal on the request r, to the
// client: it learns the upstream's resource_metadata, then writes e with its
// challenges pointing at the bridge's metadata for r (see WriteAuthError).
func (rl *Relay) RelayAuthError(w http.ResponseWriter, r *http.Request, e *UpstreamAuthError, id json.RawMessage) {
	var challenges []string
	status := http.StatusUnauthorized
	method := ""
	if e != nil {
		challenges, status, method = e.Challenges, e.Status, e.Method
	}
	meta := MetadataURL(rl.public(r))
	rl.learn(challenges, meta)
	if _, unparsed := RewriteChallenges(challenges, meta); len(unparsed) > 0 {
		rl.log.Warn("oauth metadata: an upstream WWW-Authenticate value could not be rewritten and is relayed as sent; clients following it may reject the upstream's metadata", "values", len(unparsed))
	}
	rl.log.Info("relaying the upstream's authorization refusal", "status", status, "method", method)
	WriteAuthError(w, e, meta, id)
}

// candidates are the URLs to try for the upstream's document, in order: the
// learnt resource_metadata, then the path-suffixed and root well-known URIs
// at the upstream's origin (the order MCP clients use).
func (rl *Relay) candidates() []string {
	rl.mu.Lock()
	learnt := rl.learnt
	rl.mu.Unlock()
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	add(learnt)
	add(MetadataURL(rl.upstream))
	add(MetadataURL(rl.origin))
	return out
}

// fetchError is a failure to tell the client about.
type fetchError struct {
	status     int
	code       string
	msg        string
	retryAfter string
}

func (e *fetchError) Error() string { return e.msg }

// document returns the upstream's metadata, from the cache when fresh.
func (rl *Relay) document(ctx context.Context) (cacheEntry, error) {
	urls := rl.candidates()
	if len(urls) == 0 {
		return cacheEntry{}, &fetchError{status: http.StatusBadGateway, code: "server_error", msg: "the bridge has no upstream URL to fetch the protected resource metadata from"}
	}
	key := urls[0]
	if e, ok := rl.cached(key); ok {
		return e, nil
	}
	ch := rl.group.DoChan(key, func() (any, error) {
		if e, ok := rl.cached(key); ok {
			return e, nil
		}
		e, ttl, err := rl.fetch(urls)
		rl.noteState(e, err)
		if err != nil {
			return nil, err
		}
		e.expires = rl.now().Add(ttl)
		if ttl > 0 {
			rl.mu.Lock()
			now := rl.now()
			for k, old := range rl.cache {
				if !now.Before(old.expires) {
					delete(rl.cache, k)
				}
			}
			rl.cache[key] = e
			rl.mu.Unlock()
		}
		return e, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return cacheEntry{}, res.Err
		}
		return res.Val.(cacheEntry), nil
	case <-ctx.Done():
		return cacheEntry{}, ctx.Err()
	}
}

func (rl *Relay) cached(key string) (cacheEntry, bool) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	e, ok := rl.cache[key]
	if ok && rl.now().Before(e.expires) {
		return e, true
	}
	if ok {
		delete(rl.cache, key)
	}
	return cacheEntry{}, false
}

// noteState logs when the upstream's metadata changes between present,
// absent and unreachable.
func (rl *Relay) noteState(e cacheEntry, err error) {
	state := "present " + e.source
	if e.mismatch != "" {
		state += " mismatch " + e.mismatch
	}
	switch {
	case err != nil:
		state = "failed"
	case e.doc == nil:
		state = "absent"
	}
	rl.mu.Lock()
	changed := rl.state != state
	rl.state = state
	rl.mu.Unlock()
	if !changed {
		return
	}
	switch {
	case err != nil:
		rl.log.Warn("oauth metadata: could not fetch the upstream's protected resource metadata; clients get an error until it answers", "upstream", rl.origin.String(), "reason", err.Error())
	case e.doc == nil:
		rl.log.Info("oauth metadata: the upstream publishes no protected resource metadata; the bridge answers 404 at its well-known URIs", "upstream", rl.origin.String())
	case e.mismatch != "":
		rl.log.Warn("oauth metadata: the upstream's protected resource metadata names another resource than the upstream's URL; serving it unchanged, so clients refuse it as they would without the bridge (RFC 9728 §3.3); fix the upstream's resource",
			"source", e.source, "resource", e.mismatch, "upstream", resourceID(rl.upstream))
	default:
		rl.log.Info("oauth metadata: serving the upstream's protected resource metadata with the bridge's URL as its resource", "source", e.source)
	}
}

// fetch tries urls in order. A 4xx tries the next URL (as clients do); a 5xx,
// an unreachable upstream or an unusable document stops with an error. All
// 4xx: the upstream has no document (entry with a nil doc).
func (rl *Relay) fetch(urls []string) (cacheEntry, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	var ttl time.Duration
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			continue
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set(loopHeader, rl.loopID)
		resp, err := rl.client.Do(req)
		if err != nil {
			rl.log.Debug("oauth metadata: fetch failed", "url", u, "err", err)
			return cacheEntry{}, 0, &fetchError{status: http.StatusBadGateway, code: "temporarily_unavailable",
				msg: "the bridge could not fetch the upstream's protected resource metadata: " + gist(err)}
		}
		body, tooBig, rerr := readLimited(resp.Body, maxDocument)
		resp.Body.Close()
		// The lifetime is the one of the response the outcome rests on: its
		// explicit max-age (RFC 9111 §4.2.1), capped at the TTL. Without one
		// the relay keeps nothing: it does not guess a heuristic lifetime
		// (RFC 9111 §4.2.2), since the document names the authorization
		// servers and a stale copy sends clients to one the upstream left;
		// clients fetch it only when they sign in, and concurrent fetches
		// share one upstream request.
		ttl = 0
		if ma, ok := maxAge(resp.Header.Get("Cache-Control")); ok {
			ttl = min(ma, rl.ttl)
		}
		switch {
		case resp.StatusCode >= 500:
			fe := &fetchError{status: http.StatusBadGateway, code: "temporarily_unavailable",
				msg: fmt.Sprintf("the upstream answered its protected resource metadata request with HTTP %d; try again later", resp.StatusCode)}
			if resp.StatusCode == http.StatusServiceUnavailable {
				fe.status = http.StatusServiceUnavailable
				fe.retryAfter = resp.Header.Get("Retry-After")
			}
			return cacheEntry{}, 0, fe
		case resp.StatusCode != http.StatusOK:
			// 404 and the other 4xx: not here, try the next URL.
			continue
		case rerr != nil:
			return cacheEntry{}, 0, &fetchError{status: http.StatusBadGateway, code: "temporarily_unavailable",
				msg: "the bridge could not read the upstream's protected resource metadata: " + gist(rerr)}
		case tooBig:
			return cacheEntry{}, 0, &fetchError{status: http.StatusBadGateway, code: "server_error",
				msg: fmt.Sprintf("the upstream's protected resource metadata is larger than %d KiB; the bridge refuses it", maxDocument>>10)}
		}
		doc, err := validateDocument(body)
		if err != nil {
			return cacheEntry{}, 0, &fetchError{status: http.StatusBadGateway, code: "server_error",
				msg: "the upstream's protected resource metadata is not usable: " + err.Error()}
		}
		e := cacheEntry{doc: doc, source: u}
		if res := docResource(doc); !sameResource(res, rl.upstream) {
			e.mismatch = res
		}
		return e, ttl, nil
	}
	return cacheEntry{}, ttl, nil
}

func readLimited(r io.Reader, limit int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	return b, int64(len(b)) > limit, nil
}

// maxAge returns the lifetime a Cache-Control value allows: its max-age, or
// zero for no-store and no-cache (RFC 9111 §5.2.2).
func maxAge(cc string) (time.Duration, bool) {
	var d time.Duration
	found := false
	for _, part := range strings.Split(cc, ",") {
		part = strings.ToLower(strings.TrimSpace(part))
		switch {
		case part == "no-store" || part == "no-cache":
			return 0, true
		case strings.HasPrefix(part, "max-age="):
			n, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(part, "max-age="), `"`), 10, 64)
			if err == nil && n >= 0 {
				if n > int64(24*time.Hour/time.Second) {
					n = int64(24 * time.Hour / time.Second)
				}
				d, found = time.Duration(n)*time.Second, true
			}
		}
	}
	return d, found
}

// validateDocument checks the document is an RFC 9728 §2 JSON object with a
// resource and the authorization_servers the MCP authorization spec requires.
func validateDocument(body []byte) (map[string]json.RawMessage, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return nil, errors.New("it is not a JSON object")
	}
	var resource string
	if err := json.Unmarshal(doc["resource"], &resource); err != nil || resource == "" {
		return nil, errors.New(`it has no "resource" string`)
	}
	var servers []string
	if err := json.Unmarshal(doc["authorization_servers"], &servers); err != nil || len(servers) == 0 {
		return nil, errors.New(`it has no "authorization_servers" array of URLs`)
	}
	for _, s := range servers {
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, errors.New(`an "authorization_servers" entry is not an absolute URL`)
		}
	}
	return doc, nil
}

// gist says in a few words why a connection to the upstream failed, without
// the Go error text (which names types and internal addresses).
func gist(err error) string {
	var (
		unknownCA    x509.UnknownAuthorityError
		invalidCert  x509.CertificateInvalidError
		hostname     x509.HostnameError
		verification *tls.CertificateVerificationError
		dns          *net.DNSError
		maxBytes     *http.MaxBytesError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return "it did not answer in time"
	case errors.As(err, &unknownCA), errors.As(err, &invalidCert), errors.As(err, &hostname), errors.As(err, &verification):
		return "its TLS certificate was not accepted"
	case errors.As(err, &dns):
		return "its host name did not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "it refused the connection"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "it closed the connection"
	case errors.As(err, &maxBytes):
		return "the request was too large"
	}
	return "the connection failed"
}

// servePRM serves the protected resource metadata at suffix ("" for the
// root well-known URI, else the path of the endpoint it describes).
func (rl *Relay) servePRM(w http.ResponseWriter, r *http.Request, suffix string) {
	h := w.Header()
	// The document is public (RFC 9728 §3) and browser-based clients fetch
	// it cross-origin.
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version, Accept")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		writeJSONError(w, http.StatusMethodNotAllowed, "invalid_request", "the protected resource metadata is read with GET")
		return
	}
	if r.Header.Get(loopHeader) == rl.loopID {
		rl.log.Warn("oauth metadata: the upstream's metadata URL leads back to this bridge; configure the upstream to name its own URL, or serve the metadata from the upstream")
		writeJSONError(w, http.StatusNotFound, "not_found", "metadata loop: the bridge was asked for its own metadata while fetching the upstream's")
		return
	}
	public := rl.public(r)
	if public == nil || public.Host == "" {
		writeJSONError(w, http.StatusInternalServerError, "server_error", "the bridge does not know its public URL for this request")
		return
	}
	// The root document describes the MCP endpoint too: the bridge protects
	// one resource, and clients that fall back to the root (MCP 2025-06-18
	// and later) compare its resource with the endpoint URL they dialed.
	if suffix != "" && !samePath(suffix, public.Path) {
		writeJSONError(w, http.StatusNotFound, "not_found",
			"no protected resource at this path; the bridge's MCP endpoint is "+resourceID(public)+" and its metadata is at "+MetadataURL(public))
		return
	}
	e, err := rl.document(r.Context())
	if err != nil {
		var fe *fetchError
		if !errors.As(err, &fe) {
			// The request's context ended while the fetch was under way.
			writeJSONError(w, http.StatusServiceUnavailable, "temporarily_unavailable",
				"the bridge stopped waiting for the upstream's protected resource metadata; try again")
			return
		}
		if fe.retryAfter != "" {
			h.Set("Retry-After", fe.retryAfter)
		}
		h.Set("Cache-Control", "no-store")
		writeJSONError(w, fe.status, fe.code, fe.msg)
		return
	}
	age := int64(e.expires.Sub(rl.now()) / time.Second)
	if age < 0 {
		age = 0
	}
	if age > 0 {
		h.Set("Cache-Control", "public, max-age="+strconv.FormatInt(age, 10))
	} else {
		h.Set("Cache-Control", "no-cache") // the upstream gave it no lifetime
	}
	if e.doc == nil {
		writeJSONError(w, http.StatusNotFound, "not_found",
			"the upstream publishes no OAuth protected resource metadata (RFC 9728), so the bridge has none to serve; the upstream does not advertise OAuth")
		return
	}
	out := make(map[string]json.RawMessage, len(e.doc))
	for k, v := range e.doc {
		out[k] = v
	}
	// A document whose resource is not the upstream's URL is not the
	// upstream's to vouch for: rewriting it would launder it into one the
	// client accepts. It is served as sent, so the client compares it with
	// the URL it dialed and refuses it exactly as it would without the
	// bridge (RFC 9728 §3.3, §7.3 impersonation). Refusing it here instead
	// would hide that comparison behind a bridge error.
	if e.mismatch == "" {
		res, _ := json.Marshal(resourceID(public))
		out["resource"] = res
	}
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		buf.WriteString(`{"error":"server_error"}` + "\n")
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeJSONError writes an error in the RFC 6749 §5.2 shape OAuth clients
// and people both read.
func writeJSONError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}{code, description})
}
