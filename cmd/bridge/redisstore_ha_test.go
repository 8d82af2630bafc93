package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// --store takes the Sentinel and Cluster URL forms: a task written by a
// replica is listed by `bridge tasks list --store` on each.
func TestRedisStoreTopologies(t *testing.T) {
	sen, err := redistest.LaunchSentinel(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sen.Stop)
	cl, err := redistest.LaunchCluster(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name, url := range map[string]string{"sentinel": sen.URL, "cluster": cl.URL} {
		prefix := "tbcmd-" + name
		rs, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: url, Prefix: prefix})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sessionmap.Scope{Session: "s"},
			Direction: sessionmap.LegacyToModern, Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "slow_task"}
		if err := rs.CreateTask(ctx, task); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_ = rs.Close()
		if got := taskIDs(t, mustRun(t, "tasks", "list", "--json", "--store", url, "--redis-prefix", prefix)); len(got) != 1 || got[0] != task.ID {
			t.Fatalf("%s: tasks list --store = %v, want [%s]", name, got, task.ID)
		}
	}
}

// The password comes from --redis-password-file (an ACL user's, with the
// user in the URL); a wrong one is refused without being shown; TLS files
// without a TLS URL are refused in words.
func TestRedisStorePasswordFileAndTLSFlags(t *testing.T) {
	const pw = "file-pw-never-shown"
	srv := redistest.StartLocal(t, "--user", "bridge", "on", ">"+pw, "~*", "&*", "+@all", "--user", "default", "off")
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	if err := os.WriteFile(good, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("wrong-"+pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "redis://bridge@" + srv.Addr + "/0"
	if out, err := runBridge(t, "tasks", "list", "--json", "--store", url, "--redis-password-file", good); err != nil {
		t.Fatalf("with the password file: %v\n%s", err, out)
	}
	out, err := runBridge(t, "tasks", "list", "--store", url, "--redis-password-file", bad)
	if err == nil || strings.Contains(err.Error()+out, pw) {
		t.Fatalf("wrong password file: %v\n%s", err, out)
	}
	out, err = runBridge(t, "tasks", "list", "--store", url, "--redis-password-file", good, "--redis-ca", good)
	if err == nil || !strings.Contains(err.Error(), "TLS store URL") || strings.Contains(err.Error()+out, pw) {
		t.Fatalf("--redis-ca with redis:// = %v", err)
	}
}
