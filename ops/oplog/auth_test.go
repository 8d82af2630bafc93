package oplog

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
)

// An upstream that answers 401 is reachable and says so once, in words an
// operator reads as "clients must sign in", never "transport failure" or
// "unreachable"; a 403 is a WARN of its own; a failed TLS handshake is an
// outage that names TLS.
func TestUpstreamHealthNamesRefusalsAndTLS(t *testing.T) {
	var buf bytes.Buffer
	u := &UpstreamHealth{Log: slog.New(slog.NewTextHandler(&buf, nil)), Target: "https://up/mcp"}
	for range 5 {
		u.Observe("server/discover", &oauthmeta.UpstreamAuthError{Status: 401, Method: "server/discover"})
	}
	out := buf.String()
	if strings.Count(out, "upstream requires authorization") != 1 || strings.Contains(out, "unreachable") || strings.Contains(out, "transport") {
		t.Fatalf("five 401s, want one 'requires authorization' line and no outage:\n%s", out)
	}
	buf.Reset()
	u.Observe("tools/call", &oauthmeta.UpstreamAuthError{Status: 403})
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "HTTP 403 Forbidden") {
		t.Errorf("403 line = %q", out)
	}
	buf.Reset()
	u.Observe("tools/call", nil)
	u.Observe("tools/call", &oauthmeta.UpstreamAuthError{Status: 401})
	if out := buf.String(); strings.Count(out, "upstream requires authorization") != 1 {
		t.Errorf("a 401 after a success is logged again:\n%s", out)
	}
	buf.Reset()
	u.Observe("tools/call", fmt.Errorf("Post: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}))
	if out := buf.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "TLS handshake") {
		t.Errorf("TLS failure line = %q", out)
	}
}
