package metrics

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
)

// tlsFailure is implemented by errors that stand for a failed TLS handshake
// the bridge has already classified (router's upstream meter).
type tlsFailure interface{ TLSFailure() bool }

// IsTLSFailure reports whether err is a failed TLS handshake or certificate
// check towards the upstream: an untrusted, expired or misnamed certificate,
// a TLS alert, or a server that does not speak TLS at all.
func IsTLSFailure(err error) bool {
	if err == nil {
		return false
	}
	var (
		tf  tlsFailure
		cve *tls.CertificateVerificationError
		rhe tls.RecordHeaderError
		ae  tls.AlertError
		uae x509.UnknownAuthorityError
		he  x509.HostnameError
		cie x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &tf):
		return tf.TLSFailure()
	case errors.As(err, &cve), errors.As(err, &rhe), errors.As(err, &ae),
		errors.As(err, &uae), errors.As(err, &he), errors.As(err, &cie):
		return true
	}
	return false
}
