package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
)

// DescribeUpstream words a failed TLS connection to the upstream for the
// operator: what is wrong and the flag that fixes it, e.g. "the upstream's
// certificate is not trusted: signed by unknown authority; set
// --upstream-ca". ok is false when err is no TLS failure.
func DescribeUpstream(err error) (cause string, ok bool) {
	if err == nil {
		return "", false
	}
	var (
		uae x509.UnknownAuthorityError
		he  x509.HostnameError
		cie x509.CertificateInvalidError
		sie x509.SystemRootsError
		cve *tls.CertificateVerificationError
		rhe tls.RecordHeaderError
		ae  tls.AlertError
		oe  *net.OpError
	)
	switch {
	case errors.As(err, &uae):
		return "the upstream's certificate is not trusted: signed by unknown authority; set --upstream-ca to the CA that signed it", true
	case errors.As(err, &he):
		return "the upstream's certificate is not valid for the name the bridge checks (" + strip(he.Error()) +
			"); set --upstream-tls-server-name to a name it carries, or use that name in --upstream", true
	case errors.As(err, &cie):
		switch cie.Reason {
		case x509.Expired:
			return "the upstream's certificate has expired or is not valid yet (" + strip(cie.Error()) + "); renew it, or check the clocks", true
		case x509.IncompatibleUsage:
			return "the upstream's certificate is not meant for a TLS server (" + strip(cie.Error()) + ")", true
		}
		return "the upstream's certificate is not valid: " + strip(cie.Error()), true
	case errors.As(err, &sie):
		return "the upstream's certificate could not be checked: the system has no root certificates; set --upstream-ca", true
	case errors.As(err, &cve):
		return "the upstream's certificate could not be verified: " + strip(cve.Err.Error()), true
	case errors.As(err, &rhe):
		return "the upstream did not answer in TLS (an http:// server behind an https:// --upstream URL?)", true
	case errors.As(err, &ae):
		return remoteAlert(tls.AlertError(ae).Error()), true
	case errors.As(err, &oe) && oe.Op == "remote error":
		return remoteAlert(oe.Err.Error()), true
	}
	// Handshake failures Go reports as plain errors of crypto/tls and
	// net/http.
	msg := err.Error()
	if strings.Contains(msg, "server gave HTTP response to HTTPS client") {
		return "the upstream did not answer in TLS (an http:// server behind an https:// --upstream URL?)", true
	}
	for _, s := range []string{"tls: server selected unsupported protocol version", "tls: no supported versions", "tls: handshake failure"} {
		if strings.Contains(msg, s) {
			return "the TLS handshake with the upstream failed: " + s[len("tls: "):], true
		}
	}
	return "", false
}

// remoteAlert words an alert the upstream sent during the handshake.
func remoteAlert(alert string) string {
	alert = strings.TrimPrefix(alert, "tls: ")
	switch alert {
	case "certificate required", "bad certificate", "unknown certificate authority", "certificate unknown", "handshake failure":
		return "the upstream refused the bridge's TLS handshake (" + alert + "): it wants a client certificate it trusts; " +
			"set --upstream-client-cert and --upstream-client-key (or check that its CA trusts them)"
	case "protocol version not supported":
		return "the upstream refused the bridge's TLS handshake (" + alert + "): it needs a TLS version the bridge does not offer (1.2 or newer)"
	}
	return "the upstream refused the bridge's TLS handshake (" + alert + ")"
}

// strip drops Go's package prefixes ("x509: ", "tls: ") from an error text.
func strip(s string) string {
	for _, p := range []string{"x509: ", "tls: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
