module github.com/tasksbridge/tasksbridge/migratecheck/golangci

go 1.26.0

require (
	github.com/golangci/plugin-module-register v0.1.2
	github.com/tasksbridge/tasksbridge v0.0.0
	golang.org/x/tools v0.52.0
)

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

// Local development and tests build against this checkout. golangci-lint's
// "custom" builder ignores replace directives of dependencies, so building a
// custom binary needs a published tasksbridge version (see README.md).
replace github.com/tasksbridge/tasksbridge => ../..
