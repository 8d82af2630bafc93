package tlsconf

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
)

// LoadPool reads a PEM bundle of CA certificates into a new pool. A file
// without a single certificate is an error (a key or a DER file given by
// mistake would otherwise trust nothing, silently).
func LoadPool(path string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if err := appendPEM(pool, path); err != nil {
		return nil, err
	}
	return pool, nil
}

func appendPEM(pool *x509.CertPool, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("CA bundle: %w", err)
	}
	n := 0
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return fmt.Errorf("CA bundle %s: certificate %d: %w", path, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return fmt.Errorf("CA bundle %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return nil
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
