// Package deploy holds no code: its tests check the deployment artefacts
// beside it (kubernetes/, systemd/) and the module root's Dockerfile against
// the bridge built from this checkout. Kubernetes' API types are imported by
// the tests only, so they stay out of the bridge binary (checked there).
package deploy
