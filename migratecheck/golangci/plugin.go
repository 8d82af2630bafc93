// Package golangci registers migrate-check's analyzers as a golangci-lint v2
// module plugin named "migratecheck" (plugin-module-register). Settings use
// the keys of .migrate-check.yaml: rules, libraries, method_call_funcs,
// target and fix; severity, fail_on and tests are accepted for symmetry but
// golangci-lint's own severity, issue and run.tests settings apply instead.
//
// It is a separate Go module so that golangci-lint's registration package
// never becomes a requirement of github.com/tasksbridge/tasksbridge.
package golangci

import (
	"fmt"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/driver"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

func init() {
	register.Plugin("migratecheck", New)
}

// Plugin is the golangci-lint plugin instance.
type Plugin struct {
	resolved *settings.Resolved
}

var _ register.LinterPlugin = (*Plugin)(nil)

// New decodes the plugin settings (linters.settings.custom.migratecheck.settings).
func New(raw any) (register.LinterPlugin, error) {
	cfg := &settings.Config{}
	if raw != nil {
		c, err := register.DecodeSettings[settings.Config](raw)
		if err != nil {
			return nil, fmt.Errorf("migratecheck settings: %w", err)
		}
		cfg = &c
	}
	r, err := settings.Resolve(cfg, settings.Overrides{})
	if err != nil {
		return nil, fmt.Errorf("migratecheck settings: %w", err)
	}
	return &Plugin{resolved: r}, nil
}

// BuildAnalyzers configures and returns the analyzers. Configuration is
// process-wide (it lives in the analyzer's flags), as for every analyzer
// configured by flags.
func (p *Plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	if err := migratecheck.Configure(p.resolved.Settings); err != nil {
		return nil, fmt.Errorf("migratecheck: %w", err)
	}
	// Prefixed with the rule ID: golangci-lint prints only the message.
	return driver.PrefixedAnalyzers(), nil
}

// GetLoadMode: the rules resolve library objects, so they need type information.
func (p *Plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
