package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/runtime/credseal"
)

// credentialKeyFlag names the key that seals the clients' upstream
// credentials the store keeps (runtime/credseal).
var credentialKeyFlag = &cli.StringFlag{
	Name:    "credential-key-file",
	EnvVars: []string{"TASKSBRIDGE_CREDENTIAL_KEY_FILE"},
	Usage: "seal clients' upstream credentials with the AES-256 key in `PATH` (base64 of 32 bytes; make one with " +
		"`head -c 32 /dev/urandom | base64`; a second line is the previous key, decrypt-only) and keep them in the store, " +
		"so a refreshed token reaches its tasks on every replica and after a restart; without it (and without " +
		credseal.EnvKey + ", the key itself in base64) they stay in this process's memory only. Give every replica the same key",
}

// credentialKey loads --credential-key-file, else $TASKSBRIDGE_CREDENTIAL_KEY;
// nil when neither is set.
func credentialKey(c *cli.Context) (*credseal.Sealer, error) {
	s, err := credseal.Load(c.String(credentialKeyFlag.Name), os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", credentialKeyFlag.Name, err)
	}
	return s, nil
}
