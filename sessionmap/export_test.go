package sessionmap

import "log/slog"

// EngineLogger is the adapter Badger logs through, for tests outside the
// package that check how the operator's log handler treats its records.
func EngineLogger(l *slog.Logger, dir string) interface {
	Warningf(string, ...any)
	Infof(string, ...any)
} {
	return badgerLogger{l: l, dir: dir}
}
