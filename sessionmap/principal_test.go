package sessionmap_test

import (
	"testing"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// TestPrincipalFromSubjectUnambiguous: the two-field principals are stable,
// differ by field boundary and by domain.
func TestPrincipalFromSubjectUnambiguous(t *testing.T) {
	a := sessionmap.PrincipalFromSubject("https://idp.example", "alice")
	if a != sessionmap.PrincipalFromSubject("https://idp.example", "alice") || len(a) != 64 {
		t.Fatalf("not a stable hex SHA-256: %q", a)
	}
	distinct := map[string]string{
		"same":          a,
		"moved byte":    sessionmap.PrincipalFromSubject("https://idp.examplea", "lice"),
		"other sub":     sessionmap.PrincipalFromSubject("https://idp.example", "bob"),
		"other iss":     sessionmap.PrincipalFromSubject("https://other.example", "alice"),
		"gateway":       sessionmap.PrincipalFromGatewayUser("https://idp.example", "alice"),
		"gateway moved": sessionmap.PrincipalFromGatewayUser("X-User", "1:a"),
		"gateway base":  sessionmap.PrincipalFromGatewayUser("X-User1:", "a"),
		"mtls":          sessionmap.PrincipalFromMTLSSubject("alice"),
		"authorization": sessionmap.PrincipalFromAuthorization("alice"),
	}
	seen := map[string]string{}
	for name, p := range distinct {
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s give the same principal", name, other)
		}
		seen[p] = name
	}
	for _, p := range []string{
		sessionmap.PrincipalFromSubject("", "alice"), sessionmap.PrincipalFromSubject("iss", ""),
		sessionmap.PrincipalFromGatewayUser("", "alice"), sessionmap.PrincipalFromGatewayUser("X-User", ""),
	} {
		if p != "" {
			t.Errorf("an empty field gave principal %q, want \"\"", p)
		}
	}
}
