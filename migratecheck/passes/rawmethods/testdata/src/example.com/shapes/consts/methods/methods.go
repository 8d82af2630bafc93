// Package methods declares method-name constants used by another package.
package methods // want `^note: the package still serves 2025-11-25 peers \(it declares their`

// TasksResult is dispatched in example.com/shapes/consts.
const TasksResult = "tasks/result"

// TasksGet is unchanged.
const TasksGet = "tasks/get"
