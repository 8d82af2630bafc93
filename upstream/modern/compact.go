package modernup

import "github.com/tasksbridge/tasksbridge/modern"

// compactTask lets a decoded task share what it would otherwise hold twice.
// A task read or pushed is kept as its watcher's latest snapshot for as long
// as the task is watched (runtime/watch; one per watched task, thousands at
// once when waits park on distinct tasks, docs/ARCHITECTURE.md, One watcher
// per upstream task): its status becomes the package's constant rather than
// a decoded copy, and a lastUpdatedAt equal to createdAt (a task that never
// changed) shares createdAt's string. The values are unchanged.
func compactTask(d *modern.DetailedTask) {
	switch d.Status {
	case modern.StatusWorking:
		d.Status = modern.StatusWorking
	case modern.StatusInputRequired:
		d.Status = modern.StatusInputRequired
	case modern.StatusCompleted:
		d.Status = modern.StatusCompleted
	case modern.StatusFailed:
		d.Status = modern.StatusFailed
	case modern.StatusCancelled:
		d.Status = modern.StatusCancelled
	}
	if d.LastUpdatedAt == d.CreatedAt {
		d.LastUpdatedAt = d.CreatedAt
	}
}
