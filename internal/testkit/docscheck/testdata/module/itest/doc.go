// Package itest holds the fixture's integration-tagged code.
package itest
