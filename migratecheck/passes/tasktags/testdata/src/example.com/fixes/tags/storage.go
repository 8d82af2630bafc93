package tags

// record is a storage record that nothing sends: silent, never renamed.
type record struct {
	TaskID    string `db:"task_id" json:"taskId"`
	Status    string `db:"status" json:"status"`
	CreatedAt string `db:"created_at" json:"createdAt"`
	TTL       int64  `db:"ttl" json:"ttl"`
}

var _ = record{}
