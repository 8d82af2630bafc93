// Package methods declares method-name constants used by another package.
package methods

// TasksResult is dispatched in example.com/shapes/consts.
const TasksResult = "tasks/result"

// TasksGet is unchanged.
const TasksGet = "tasks/get"
