package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// maxDocument bounds a discovery document, a JWKS or an introspection answer.
const maxDocument = 1 << 20

// keyMap is one fetched JWKS: the usable verification keys by kid. It is
// immutable once published, so the hot path reads it without a lock.
type keyMap struct {
	byKID   map[string][]jose.JSONWebKey
	all     []jose.JSONWebKey
	fetched time.Time
}

// fetchCall is one JWKS fetch that concurrent callers share.
type fetchCall struct {
	done chan struct{}
}

// keySet caches an issuer's keys. Policy: a kid not in the cache triggers a
// refetch, but at most one fetch starts per refetch interval (concurrent
// callers share it); keys older than maxAge are refreshed in the background;
// a failed fetch keeps the cached keys.
type keySet struct {
	client       *http.Client
	timeout      time.Duration
	interval     time.Duration
	maxAge       time.Duration
	log          *slog.Logger
	now          func() time.Time
	host         string                                // for messages: the JWKS host, or the issuer's until discovered
	discover     func(context.Context) (string, error) // finds the JWKS URL when it is not configured
	keys         atomic.Pointer[keyMap]
	mu           sync.Mutex
	jwksURL      string
	lastAttempt  time.Time
	lastErr      error // of the last attempt; nil after a success
	inflight     *fetchCall
	reportedDown bool // the last failure was logged; log the recovery
}

// lookup returns the candidate keys for kid, refetching (within the policy)
// when kid is unknown. The error is an *Error: 503 when no keys can be had,
// 401 when the keys are known and none has this kid.
func (s *keySet) lookup(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	if km := s.keys.Load(); km != nil {
		if ks := km.candidates(kid); len(ks) > 0 {
			if s.now().Sub(km.fetched) > s.maxAge {
				s.refreshAsync()
			}
			return ks, nil
		}
	}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	km := s.keys.Load()
	if km != nil {
		if ks := km.candidates(kid); len(ks) > 0 {
			return ks, nil
		}
	}
	s.mu.Lock()
	lastErr, next, host := s.lastErr, s.lastAttempt.Add(s.interval), s.host
	s.mu.Unlock()
	if km == nil || lastErr != nil {
		// Without a fresh answer from the issuer an unknown kid may be a
		// rotation we cannot see: tell the client to retry, not to log in again.
		return nil, unavailable(downMessage(host, lastErr), next.Sub(s.now()))
	}
	return nil, invalidToken("the token's signing key (kid) is not among the issuer's current keys")
}

func (km *keyMap) candidates(kid string) []jose.JSONWebKey {
	if kid == "" {
		return km.all
	}
	return km.byKID[kid]
}

func downMessage(host string, err error) string {
	var d *discoveryError
	if errors.As(err, &d) {
		// The details (issuer names, flags) are for the operator's log.
		return fmt.Sprintf("cannot verify tokens right now: the issuer's metadata (%s) cannot be used; the bridge's log says why", host)
	}
	return fmt.Sprintf("cannot verify tokens right now: the issuer's keys (%s) are unreachable", host)
}

// refresh fetches the keys unless a fetch started within the interval; a
// fetch already in flight is joined. It returns an *Error only when the
// caller's context ends first.
func (s *keySet) refresh(ctx context.Context) error {
	s.mu.Lock()
	call := s.inflight
	if call == nil {
		if !s.lastAttempt.IsZero() && s.now().Sub(s.lastAttempt) < s.interval {
			s.mu.Unlock()
			return nil
		}
		call = s.startLocked()
	}
	s.mu.Unlock()
	select {
	case <-call.done:
		return nil
	case <-ctx.Done():
		return unavailable("cannot verify tokens right now: the request ended while the issuer's keys were being fetched", time.Second)
	}
}

// refreshAsync starts a background fetch when the policy allows one.
func (s *keySet) refreshAsync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight == nil && s.now().Sub(s.lastAttempt) >= s.interval {
		s.startLocked()
	}
}

// startLocked starts a shared fetch; s.mu is held. The fetch has its own
// deadline, not a caller's context: one caller giving up must not fail the
// others waiting on it.
func (s *keySet) startLocked() *fetchCall {
	call := &fetchCall{done: make(chan struct{})}
	s.inflight = call
	s.lastAttempt = s.now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		km, err := s.fetch(ctx)
		s.mu.Lock()
		if err == nil {
			s.keys.Store(km)
		}
		s.lastErr = err
		s.inflight = nil
		wasDown, host := s.reportedDown, s.host
		s.reportedDown = err != nil
		s.mu.Unlock()
		// Log before waking the waiters, so what they answer follows the log.
		defer close(call.done)
		var d *discoveryError
		switch {
		case errors.As(err, &d):
			s.log.Error("cannot use the token issuer's metadata; fix --oidc-issuer or give --jwks-url", "host", host, "error", err)
		case err != nil && !wasDown:
			s.log.Warn("cannot fetch the token issuer's keys; cached keys stay in use", "host", host, "error", err)
		case err != nil:
			s.log.Debug("the token issuer's keys are still unreachable", "host", host, "error", err)
		case wasDown:
			s.log.Info("the token issuer's keys are reachable again", "host", host, "keys", len(km.all))
		default:
			s.log.Debug("fetched the token issuer's keys", "host", host, "keys", len(km.all))
		}
	}()
	return call
}

func (s *keySet) fetch(ctx context.Context) (*keyMap, error) {
	s.mu.Lock()
	u := s.jwksURL
	s.mu.Unlock()
	if u == "" {
		found, err := s.discover(ctx)
		if err != nil {
			return nil, err
		}
		pu, err := checkURL("the issuer's jwks_uri", found)
		if err != nil {
			return nil, &discoveryError{msg: err.Error()}
		}
		s.mu.Lock()
		s.jwksURL, u, s.host = found, found, pu.Host
		s.mu.Unlock()
	}
	body, err := getJSON(ctx, s.client, u)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("the JWKS is not a JSON key set: %w", err)
	}
	km := &keyMap{byKID: make(map[string][]jose.JSONWebKey, len(raw.Keys)), fetched: s.now()}
	skipped := 0
	for _, r := range raw.Keys {
		var k jose.JSONWebKey
		// A key of a type the library does not know, a private or a
		// symmetric key, or an encryption key is skipped, not fatal: the
		// issuer's other keys still verify.
		if err := k.UnmarshalJSON(r); err != nil || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			skipped++
			continue
		}
		km.all = append(km.all, k)
		km.byKID[k.KeyID] = append(km.byKID[k.KeyID], k)
	}
	if skipped > 0 {
		s.log.Debug("skipped JWKS entries that are not public signature keys", "url", u, "skipped", skipped)
	}
	if len(km.all) == 0 {
		return nil, errors.New("the JWKS holds no public signature keys")
	}
	return km, nil
}

// discoveryError is a discovery failure worth its own message (the issuer
// answered, but with a document the bridge must not use).
type discoveryError struct{ msg string }

func (e *discoveryError) Error() string { return e.msg }

// getJSON GETs u and returns the body of a 200 JSON answer.
func getJSON(ctx context.Context, c *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocument))
		return nil, &httpStatusError{status: resp.StatusCode, host: hostOf(u)}
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && mt != "application/json" && mt != "application/jwk-set+json" {
		return nil, fmt.Errorf("%s answered with %s, not JSON", hostOf(u), mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxDocument {
		return nil, fmt.Errorf("%s answered with more than %d bytes", hostOf(u), maxDocument)
	}
	return body, nil
}

type httpStatusError struct {
	status int
	host   string
}

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("%s answered HTTP %d %s", e.host, e.status, http.StatusText(e.status))
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return "the configured URL"
}
