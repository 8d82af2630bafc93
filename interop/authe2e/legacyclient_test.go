//go:build unix

package authe2e_test

import (
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/interop/peers"
)

// accessTTL is the tokens' lifetime in the tests with an expiry step: short
// enough that a task outlives its first token within a few seconds.
const accessTTL = 4 * time.Second

func tsOAuthArgs(as *peers.AuthServer) []string {
	return []string{"--client-id", clientID, "--client-secret", clientSecret, "--issuer", as.Issuer}
}

// Baseline without a bridge: the TypeScript SDK 1.32.2 OAuth client
// (client_credentials) against the protected TS legacy fixture discovers the
// authorization server from the 401, gets a token for the fixture's URL and
// runs a task; a second task outlives its token and completes under the next
// one. It proves the authorization server, the gate and the client work
// together, so a failure of TestTSOAuthClientThroughBridge is the bridge's.
func TestBaselineTSOAuthClientProtectedLegacy(t *testing.T) {
	t.Parallel()
	as := startAS(t, accessTTL)
	up := startProtectedLegacy(t, as)
	rep := peers.RunTSOAuthClient(t, up.URL(), peers.ClientOptions{
		Steps: []string{"unauth", "prm", "init", "task", "expiry"},
		Args:  append(tsOAuthArgs(as), "--task-args", `{"ms":200,"text":"baseline"}`),
	})
	rep.Require(t)
	if n := up.Subjects()[clientID]; n == 0 {
		t.Errorf("the protected fixture accepted no request for subject %s: %v (refused: %v)", clientID, up.Subjects(), up.Refusals())
	}
}

// a. The TypeScript SDK 1.32.2 client with its OAuth client provider
// (ClientCredentialsProvider, client_credentials) connects to the BRIDGE in
// front of the protected modern upstream: the bridge answers the
// unauthenticated initialize with 401 and a challenge naming its own
// protected resource metadata; that document names the bridge's URL as the
// resource and the real authorization server; the token the client gets has
// aud = the bridge's URL; a task-augmented tools/call, tasks/get and
// tasks/result then run through the legacy face, whose upstream requests
// carry the token (the upstream checks aud = the bridge's URL too); and a
// task outlives its token: polled and read under the next token, it is still
// the same principal's (iss, sub), so the bridge finds it.
func TestTSOAuthClientThroughBridge(t *testing.T) {
	t.Parallel()
	as := startAS(t, accessTTL)
	up := startProtectedModern(t, as)
	b := startBridge(t, up.URL(), func(pub string) []string {
		up.SetAudience(pub)
		return bridgeAuthFlags(pub, as.Issuer)
	})
	rep := peers.RunTSOAuthClient(t, b.URL, peers.ClientOptions{
		Steps: []string{"unauth", "prm", "init", "task", "expiry"},
		Args:  tsOAuthArgs(as),
	})
	if !rep.OK {
		t.Logf("HTTP exchanges of the client: %s", httpOf(rep))
		t.Logf("upstream refusals: %v", up.Refusals())
	}
	rep.Require(t)
	if n := up.Subjects()[clientID]; n == 0 {
		t.Errorf("the upstream accepted no request with the client's token (subjects %v, refused: %v): the bridge did not forward it", up.Subjects(), up.Refusals())
	}
}
