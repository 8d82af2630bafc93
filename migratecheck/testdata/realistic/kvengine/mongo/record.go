// Package mongo keeps the audit trail of tasks in MongoDB; the documents
// never leave the database.
package mongo

import "time"

// TaskDoc is one stored task document.
type TaskDoc struct {
	TaskID    string    `bson:"taskId" json:"taskId"`
	Status    string    `bson:"status" json:"status"`
	CreatedAt time.Time `bson:"createdAt" json:"createdAt"`
	TTL       int64     `bson:"ttl" json:"ttl"`
}

// Expired reports whether the document outlived its TTL (seconds).
func (d TaskDoc) Expired(now time.Time) bool {
	return now.Sub(d.CreatedAt) > time.Duration(d.TTL)*time.Second
}
