package deploy_test

import (
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"
)

// (d) Where a Docker daemon answers, `make image` builds the image and the
// image is what the Dockerfile says: the version linked in from git, user
// 65532, /bridge serve, port 8080, the data volume, and `bridge version`
// runs with a read-only root filesystem as that user.
func TestMakeImage(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("docker is not installed: the image is not built")
	}
	if out, err := exec.Command(docker, "info").CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Skipf("no Docker daemon answers `docker info` (%v: %s): the image is not built", err, lines[len(lines)-1])
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	image := "tasksbridge:deploy-test-" + hex.EncodeToString(b[:])
	mk := exec.Command("make", "image", "IMAGE="+image)
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(docker, "image", "rm", "-f", image).Run() })
	out, err := exec.Command(docker, "image", "inspect", image).Output()
	if err != nil {
		t.Fatal(err)
	}
	var insp []struct {
		Config struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			ExposedPorts map[string]any
			Volumes      map[string]any
		}
	}
	decodeJSON(t, out, &insp)
	if len(insp) != 1 {
		t.Fatalf("docker image inspect: %s", out)
	}
	c := insp[0].Config
	if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/bridge" || strings.Join(c.Cmd, " ") != "serve" ||
		c.ExposedPorts["8080/tcp"] == nil || c.Volumes["/var/lib/tasksbridge"] == nil {
		t.Errorf("image config %+v", c)
	}
	rev, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git rev-parse HEAD: %v: the image's revision is not compared", err)
	}
	out, err = exec.Command(docker, "run", "--rm", "--read-only", "--cap-drop=ALL", "--security-opt=no-new-privileges", image, "version", "--json").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"revision":"`+strings.TrimSpace(string(rev))+`"`) {
		t.Errorf("docker run %s version --json: %v\n%s", image, err, out)
	}
}
