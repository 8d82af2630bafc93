package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const kubeDir = "kubernetes"

// kustomization is the part of kustomize's Kustomization the base uses;
// decoded strictly, so a field it does not know fails the test.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// splitDocs splits a YAML stream at its --- lines.
func splitDocs(b []byte) [][]byte {
	var out [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(d, "")) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

// decodeStrict decodes one manifest into its Kubernetes API type, refusing
// unknown and duplicate fields.
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	default:
		return nil, &unknownKind{tm.APIVersion, tm.Kind}
	}
	return obj, unmarshalStrict(doc, obj)
}

// unmarshalStrict decodes YAML as the API server does: field names are
// case-sensitive (sigs.k8s.io/yaml's UnmarshalStrict goes through
// encoding/json, which would take readOnlyRootFileSystem for
// readOnlyRootFilesystem), and unknown or duplicate fields are errors.
func unmarshalStrict(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, obj, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

type unknownKind struct{ apiVersion, kind string }

func (e *unknownKind) Error() string {
	return "no API type known to the test for apiVersion " + e.apiVersion + " kind " + e.kind
}

// base decodes every resource of the kustomize base.
type base struct {
	deploy *appsv1.Deployment
	svc    *corev1.Service
	cm     *corev1.ConfigMap
	pdb    *policyv1.PodDisruptionBudget
}

func loadBase(t *testing.T) base {
	t.Helper()
	kb, err := os.ReadFile(filepath.Join(kubeDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := unmarshalStrict(kb, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml is %s %s", k.APIVersion, k.Kind)
	}
	files, _ := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	var others []string
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			others = append(others, filepath.Base(f))
		}
	}
	res := slices.Clone(k.Resources)
	sort.Strings(res)
	if !slices.Equal(res, others) {
		t.Fatalf("kustomization.yaml resources %v, but the directory has %v", k.Resources, others)
	}
	var b base
	for _, f := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(kubeDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range splitDocs(raw) {
			obj, err := decodeStrict(doc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch o := obj.(type) {
			case *appsv1.Deployment:
				b.deploy = o
			case *corev1.Service:
				b.svc = o
			case *corev1.ConfigMap:
				b.cm = o
			case *policyv1.PodDisruptionBudget:
				b.pdb = o
			}
		}
	}
	if b.deploy == nil || b.svc == nil || b.cm == nil || b.pdb == nil {
		t.Fatalf("the base lacks one of Deployment, Service, ConfigMap, PodDisruptionBudget: %+v", b)
	}
	return b
}

// (a) Every manifest decodes strictly into its API type, and the settings an
// operator relies on are what the docs say.
func TestKubernetesManifests(t *testing.T) {
	b := loadBase(t)
	d := b.deploy
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %v, want 3", d.Spec.Replicas)
	}
	sel, tmpl := d.Spec.Selector.MatchLabels, d.Spec.Template.Labels
	for k, v := range sel {
		if tmpl[k] != v {
			t.Errorf("the pod template lacks the selector label %s=%s", k, v)
		}
		if b.svc.Spec.Selector[k] != v || b.pdb.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("the Service or PodDisruptionBudget does not select %s=%s", k, v)
		}
	}
	pdb := b.pdb.Spec
	if !(pdb.MaxUnavailable != nil && *pdb.MaxUnavailable == intstr.FromInt32(1)) &&
		!(pdb.MinAvailable != nil && *pdb.MinAvailable == intstr.FromInt32(2)) {
		t.Errorf("PodDisruptionBudget: want maxUnavailable 1 or minAvailable 2, got %+v", pdb)
	}
	ps := d.Spec.Template.Spec
	if len(ps.Containers) != 1 {
		t.Fatalf("%d containers", len(ps.Containers))
	}
	c := ps.Containers[0]
	if !slices.Equal(c.Args, []string{"serve", "--config", configPath}) || c.Command != nil {
		t.Errorf("container runs %v %v, want the image's /bridge with args [serve --config %s]", c.Command, c.Args, configPath)
	}
	cfg := configOf(t, b.cm)
	port := ""
	for _, p := range c.Ports {
		if p.ContainerPort == 8080 {
			port = p.Name
		}
	}
	if port == "" || b.svc.Spec.Ports[0].TargetPort != intstr.FromString(port) {
		t.Errorf("the Service's targetPort %v is not the container's 8080 port %q", b.svc.Spec.Ports[0].TargetPort, port)
	}
	if cfg["listen"] != "0.0.0.0:8080" {
		t.Errorf("listen = %q, want 0.0.0.0:8080 (the port the probes and the Service use)", cfg["listen"])
	}
	for probe, want := range map[*corev1.Probe]string{c.ReadinessProbe: "/readyz", c.LivenessProbe: "/healthz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != want || probe.HTTPGet.Port != intstr.FromString(port) {
			t.Errorf("probe %+v, want GET %s on port %s", probe, want, port)
		}
	}
	// The ConfigMap is mounted whole (no subPath: that would never see
	// an edit) where --config reads it.
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range ps.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == b.cm.Name && m.SubPath == "" && m.ReadOnly &&
				filepath.Join(m.MountPath, "config.yaml") == configPath {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("ConfigMap %s is not mounted read-only at %s", b.cm.Name, filepath.Dir(configPath))
	}
	var store *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "TASKSBRIDGE_STORE" {
			store = &c.Env[i]
		}
	}
	if store == nil || store.Value != "" || store.ValueFrom == nil || store.ValueFrom.SecretKeyRef == nil {
		t.Errorf("TASKSBRIDGE_STORE must come from a Secret, got %+v", store)
	}
	if _, inCM := cfg["store"]; inCM {
		t.Error("the ConfigMap sets store: the Redis URL may hold a password")
	}
	// The grace period covers the shutdown delay and the shutdown timeout,
	// with time for the process to exit; the delay covers the readiness
	// probe's reaction (period x failureThreshold), so the pod leaves the
	// Service before its listener closes.
	timeout, err := time.ParseDuration(fmt.Sprint(cfg["shutdown-timeout"]))
	if err != nil {
		t.Fatalf("shutdown-timeout: %v", err)
	}
	delay, err := time.ParseDuration(fmt.Sprint(cfg["shutdown-delay"]))
	if err != nil {
		t.Fatalf("shutdown-delay: %v", err)
	}
	if g := ps.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < delay+timeout+5*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v does not cover the %v shutdown delay plus the %v shutdown timeout plus 5 s to exit", g, delay, timeout)
	}
	if rp := c.ReadinessProbe; rp != nil && time.Duration(rp.PeriodSeconds*rp.FailureThreshold)*time.Second > delay {
		t.Errorf("the readiness probe needs %d s x %d to see a draining pod, more than the %v shutdown delay", rp.PeriodSeconds, rp.FailureThreshold, delay)
	}
	// Hardening.
	psc, sc := ps.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v", psc)
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container securityContext %+v", sc)
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token it does not need")
	}
	if ps.EnableServiceLinks == nil || *ps.EnableServiceLinks {
		t.Error("enableServiceLinks is not false: a Service named tasksbridge would inject TASKSBRIDGE_* variables")
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
			t.Errorf("%s request %v / limit %v", r, req.String(), lim.String())
		}
	}
}

// configPath is where the deployment mounts the ConfigMap's config.yaml.
const configPath = "/etc/tasksbridge/config.yaml"

// configOf decodes the ConfigMap's config.yaml (bridge serve --config).
func configOf(t *testing.T, cm *corev1.ConfigMap) map[string]any {
	t.Helper()
	text, ok := cm.Data["config.yaml"]
	if !ok || len(cm.Data) != 1 {
		t.Fatalf("ConfigMap %s: want one key, config.yaml; has %d keys", cm.Name, len(cm.Data))
	}
	var cfg map[string]any
	if err := yaml.UnmarshalStrict([]byte(text), &cfg); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	return cfg
}

// The ConfigMap's config.yaml is one `bridge config check` accepts (every
// key a flag of bridge serve, every value one it takes), with the store
// from the Secret's environment variable as in the pod; a key it does not
// know fails the check.
func TestConfigMapPassesConfigCheck(t *testing.T) {
	b := loadBase(t)
	configOf(t, b.cm)
	check := func(text string) (string, error) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bridgeBinary(t), "config", "check", "--config", path)
		cmd.Env = []string{"TASKSBRIDGE_STORE=redis://:secret@redis:6379/0"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := check(b.cm.Data["config.yaml"]); err != nil {
		t.Fatalf("bridge config check: %v\n%s", err, out)
	}
	if out, err := check(b.cm.Data["config.yaml"] + "log-levle: debug\n"); err == nil || !strings.Contains(out, "log-levle: unknown key") {
		t.Fatalf("bridge config check of an unknown key: %v\n%s", err, out)
	}
}

// The decoder really is strict: a field the API type lacks fails, where
// the lenient decoder would drop it silently.
func TestManifestUnknownFieldFails(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(kubeDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(raw, []byte("  replicas: 3\n"), []byte("  replicas: 3\n  replicaCount: 3\n"), 1)
	if bytes.Equal(bad, raw) {
		t.Fatal("deployment.yaml has no \"  replicas: 3\" line to put an unknown field beside")
	}
	if _, err := decodeStrict(bad); err == nil || !strings.Contains(err.Error(), "replicaCount") {
		t.Fatalf("strict decoding of an unknown field: %v, want an error naming replicaCount", err)
	}
	if err := yaml.Unmarshal(bad, &appsv1.Deployment{}); err != nil {
		t.Fatalf("the lenient decoder refused it too (%v), so this proves nothing", err)
	}
	// A nested field in the wrong case fails too (encoding/json alone
	// would match it case-insensitively), and so does a duplicate key.
	bad = bytes.Replace(raw, []byte("readOnlyRootFilesystem:"), []byte("readOnlyRootFileSystem:"), 1)
	if _, err := decodeStrict(bad); err == nil || !strings.Contains(err.Error(), "readOnlyRootFileSystem") {
		t.Fatalf("a miscased readOnlyRootFileSystem: %v, want an error naming it", err)
	}
	bad = bytes.Replace(raw, []byte("  replicas: 3\n"), []byte("  replicas: 3\n  replicas: 1\n"), 1)
	if _, err := decodeStrict(bad); err == nil {
		t.Fatal("a duplicate replicas key was accepted")
	}
}

// `kubectl kustomize` builds the base, and what it renders decodes strictly.
func TestKustomizeBuild(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed: the base is not rendered (TestKubernetesManifests decodes its files)")
	}
	out, err := exec.Command(kubectl, "kustomize", kubeDir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
	kinds := map[string]int{}
	for _, doc := range splitDocs(out) {
		obj, err := decodeStrict(doc)
		if err != nil {
			t.Fatalf("rendered manifest: %v\n%s", err, doc)
		}
		kinds[fmt.Sprintf("%T", obj)]++
	}
	if len(kinds) != 4 {
		t.Errorf("rendered kinds %v, want 4", kinds)
	}
}
