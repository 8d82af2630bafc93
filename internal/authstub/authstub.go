// Package authstub stands in for the request edge's public URL and the
// oauthmeta relay (MetadataURL, WriteAuthError) until those land; the faces
// and the router reach it only through one unexported variable each (their
// autherr.go), so the merge repoints three lines and deletes this package.
package authstub

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// PublicURL is the URL the client dialed, as far as the request tells it:
// https when the connection is TLS, the Host header, the request path.
func PublicURL(r *http.Request) *url.URL {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path}
}

// MetadataURL is the protected resource metadata URL of the resource public
// (RFC 9728 §3.1: the well-known suffix goes between host and path).
func MetadataURL(public *url.URL) string {
	p := strings.TrimSuffix(public.Path, "/")
	return (&url.URL{Scheme: public.Scheme, Host: public.Host, Path: "/.well-known/oauth-protected-resource" + p}).String()
}

var resourceMetadata = regexp.MustCompile(`(?i)(resource_metadata\s*=\s*)("[^"]*"|[^\s,]*)`)

// WriteAuthError answers with the upstream's refusal e: its status, its
// challenges with resource_metadata pointing at metadataURL (RFC 9728 §5.1),
// and a JSON-RPC error to id that says what to do.
func WriteAuthError(w http.ResponseWriter, e *oauthmeta.UpstreamAuthError, metadataURL string, id jsonrpc.ID) {
	h := w.Header()
	h.Del("WWW-Authenticate")
	for _, c := range e.Challenges {
		h.Add("WWW-Authenticate", resourceMetadata.ReplaceAllLiteralString(c, "resource_metadata="+strconv.Quote(metadataURL)))
	}
	if len(e.Challenges) == 0 && e.Status == http.StatusUnauthorized {
		h.Add("WWW-Authenticate", "Bearer resource_metadata="+strconv.Quote(metadataURL))
	}
	msg := "Unauthorized: the upstream server requires authorization; sign in (send a valid Authorization header) and retry"
	if e.Status == http.StatusForbidden {
		msg = "Forbidden: the upstream server refused this request's authorization (insufficient scope); authorize again with the scope it asks for"
	}
	idb, err := json.Marshal(id.Raw())
	if err != nil || !id.IsValid() {
		idb = []byte("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpc.Error      `json:"error"`
	}{"2.0", idb, rpc.Errorf(rpc.CodeInternalError, "%s", msg)})
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}
