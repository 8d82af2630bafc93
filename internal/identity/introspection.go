package identity

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/sync/singleflight"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// introspectionRetry is the Retry-After when the endpoint is unreachable.
const introspectionRetry = 5 * time.Second

// Introspection is the introspection mode (RFC 7662): an opaque bearer token
// is sent to the authorization server's introspection endpoint; the
// principal is (iss, or the endpoint's URL when the answer has none; sub, or
// username when the answer has no sub). Build it with New.
type Introspection struct {
	endpoint  string
	host      string
	clientID  string
	secret    string
	client    *http.Client
	timeout   time.Duration
	audiences []string
	leeway    time.Duration
	ttl       time.Duration
	cache     *lru
	flight    singleflight.Group
	log       *slog.Logger
	now       func() time.Time
}

func newIntrospection(cfg Config) (*Introspection, error) {
	if cfg.IntrospectionURL == "" {
		return nil, errors.New("--principal introspection needs --introspection-url (the authorization server's RFC 7662 endpoint)")
	}
	u, err := checkURL("--introspection-url", cfg.IntrospectionURL)
	if err != nil {
		return nil, err
	}
	if cfg.IntrospectionClientID == "" {
		return nil, errors.New("--principal introspection needs --introspection-client-id and --introspection-client-secret-file (or TASKSBRIDGE_INTROSPECTION_CLIENT_SECRET): RFC 7662 §2.1 requires the bridge to authenticate to the endpoint")
	}
	in := &Introspection{
		endpoint: cfg.IntrospectionURL, host: u.Host, clientID: cfg.IntrospectionClientID, secret: cfg.IntrospectionClientSecret,
		client: cfg.HTTPClient, timeout: cfg.FetchTimeout, audiences: cfg.Audiences, leeway: cfg.Leeway,
		ttl: cfg.IntrospectionCacheTTL, log: cfg.Logger, now: time.Now,
	}
	if in.ttl == 0 {
		in.ttl = DefaultIntrospectionCacheTTL
	}
	size := cfg.IntrospectionCacheSize
	if size <= 0 {
		size = DefaultIntrospectionCacheSize
	}
	if in.ttl > 0 {
		in.cache = newLRU(size)
	}
	return in, nil
}

// introspected is one active answer, as cached.
type introspected struct {
	id      string
	aud     jwt.Audience
	expires time.Time // the token's exp; zero when the answer had none
	nbf     time.Time
	until   time.Time // cache deadline
}

// Resolve implements Resolver.
func (in *Introspection) Resolve(ctx context.Context, req Request) (Principal, error) {
	raw, berr := bearerToken(req.Header)
	if berr != nil {
		return Principal{}, berr
	}
	// The cache and the shared call are keyed by a digest of the token:
	// the token itself is never a map key.
	key := sha256.Sum256([]byte(raw))
	now := in.now()
	ans, ok := in.cache.get(key, now)
	if !ok {
		// Concurrent requests with one token share one call; each waits
		// only as long as its own context allows.
		var res singleflight.Result
		select {
		case res = <-in.flight.DoChan(string(key[:]), func() (any, error) { return in.introspect(raw, key) }):
		case <-ctx.Done():
			return Principal{}, in.down("did not answer before the request ended")
		}
		v, err := res.Val, res.Err
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Status != 503 {
				in.log.Debug("refused a bearer token", "reason", e.Description)
			}
			return Principal{}, err
		}
		ans = v.(*introspected)
	}
	if !ans.expires.IsZero() && now.Add(-in.leeway).After(ans.expires) {
		return Principal{}, invalidToken("the token has expired (exp); refresh it")
	}
	if !ans.nbf.IsZero() && now.Add(in.leeway).Before(ans.nbf) {
		return Principal{}, invalidToken("the token is not valid yet (nbf)")
	}
	if ans.aud != nil {
		auds := in.audiences
		if len(auds) == 0 && req.Audience != "" {
			auds = []string{req.Audience}
		}
		okAud := false
		for _, a := range auds {
			if ans.aud.Contains(a) {
				okAud = true
				break
			}
		}
		if !okAud {
			return Principal{}, invalidToken("the token is not meant for this server: its audience (aud) does not include " + strings.Join(auds, " or "))
		}
	}
	return Principal{ID: ans.id, Credential: req.Header.Get("Authorization"), Expires: ans.expires}, nil
}

// introspect asks the endpoint. Its deadline is its own: callers sharing the
// call must not fail because one of them gave up.
func (in *Introspection) introspect(raw string, key [32]byte) (*introspected, error) {
	ctx, cancel := context.WithTimeout(context.Background(), in.timeout)
	defer cancel()
	form := url.Values{"token": {raw}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: the client id and secret are form-encoded before
	// they go into the Basic credentials.
	req.SetBasicAuth(url.QueryEscape(in.clientID), url.QueryEscape(in.secret))
	resp, err := in.client.Do(req)
	if err != nil {
		in.log.Warn("cannot reach the token introspection endpoint", "host", in.host, "error", scrub(err, raw))
		return nil, in.down("is unreachable")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		in.log.Error("the token introspection endpoint refused the bridge's client credentials; check --introspection-client-id and --introspection-client-secret-file", "host", in.host, "status", resp.StatusCode)
		return nil, in.down("refuses the bridge's client credentials")
	case resp.StatusCode != http.StatusOK:
		in.log.Warn("the token introspection endpoint failed", "host", in.host, "status", resp.StatusCode)
		return nil, in.down(fmt.Sprintf("answered HTTP %d", resp.StatusCode))
	case err != nil || len(body) > maxDocument:
		in.log.Warn("cannot read the token introspection answer", "host", in.host)
		return nil, in.down("sent an unreadable answer")
	}
	var a struct {
		Active   bool             `json:"active"`
		Sub      string           `json:"sub"`
		Username string           `json:"username"`
		Iss      string           `json:"iss"`
		Aud      jwt.Audience     `json:"aud"`
		Exp      *jwt.NumericDate `json:"exp"`
		Nbf      *jwt.NumericDate `json:"nbf"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		in.log.Warn("the token introspection answer is not the JSON of RFC 7662 §2.2", "host", in.host)
		return nil, in.down("sent an answer that is not RFC 7662 JSON")
	}
	if !a.Active {
		return nil, invalidToken("the token is not active (revoked, expired or unknown to the authorization server)")
	}
	iss := a.Iss
	if iss == "" {
		iss = in.endpoint
	}
	sub := a.Sub
	if sub == "" {
		// RFC 7662 §2.2: username is "a human-readable identifier for the
		// resource owner"; a server that omits sub names its users this way.
		sub = a.Username
	}
	if sub == "" {
		in.log.Warn("the token introspection answer names no user (neither sub nor username); the token is refused", "host", in.host)
		return nil, invalidToken("the authorization server's answer for this token names no user (no sub or username), so the bridge cannot tell whose tasks it may see")
	}
	ans := &introspected{id: sessionmap.PrincipalFromSubject(iss, sub), aud: a.Aud}
	if a.Exp != nil {
		ans.expires = a.Exp.Time()
	}
	if a.Nbf != nil {
		ans.nbf = a.Nbf.Time()
	}
	now := in.now()
	ans.until = now.Add(in.ttl)
	if !ans.expires.IsZero() && ans.expires.Before(ans.until) {
		ans.until = ans.expires
	}
	in.cache.put(key, ans)
	return ans, nil
}

func (in *Introspection) down(what string) *Error {
	return unavailable(fmt.Sprintf("cannot verify tokens right now: the token introspection endpoint (%s) %s", in.host, what), introspectionRetry)
}

// scrub removes raw from an error's text: a transport error may quote the
// request, and the request body holds the token.
func scrub(err error, raw string) string {
	s := err.Error()
	if raw != "" {
		s = strings.ReplaceAll(s, raw, "[token]")
		s = strings.ReplaceAll(s, url.QueryEscape(raw), "[token]")
	}
	return s
}

// lru is a bounded cache of introspection answers by token digest.
type lru struct {
	mu    sync.Mutex
	max   int
	items map[[32]byte]*lruEntry
	head  lruEntry // sentinel: head.next is the most recent
}

type lruEntry struct {
	key        [32]byte
	val        *introspected
	prev, next *lruEntry
}

func newLRU(max int) *lru {
	c := &lru{max: max, items: make(map[[32]byte]*lruEntry, min(max, 1024))}
	c.head.prev, c.head.next = &c.head, &c.head
	return c
}

func (c *lru) get(k [32]byte, now time.Time) (*introspected, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	if !now.Before(e.val.until) {
		c.unlink(e)
		delete(c.items, k)
		return nil, false
	}
	c.unlink(e)
	c.pushFront(e)
	return e.val, true
}

func (c *lru) put(k [32]byte, v *introspected) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.val = v
		c.unlink(e)
		c.pushFront(e)
		return
	}
	if len(c.items) >= c.max {
		old := c.head.prev
		c.unlink(old)
		delete(c.items, old.key)
	}
	e := &lruEntry{key: k, val: v}
	c.items[k] = e
	c.pushFront(e)
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

func (c *lru) unlink(e *lruEntry) { e.prev.next, e.next.prev = e.next, e.prev }

func (c *lru) pushFront(e *lruEntry) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
}
