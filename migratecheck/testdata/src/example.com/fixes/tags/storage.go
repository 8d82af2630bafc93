package tags

// record is a storage record: reported, never renamed.
type record struct {
	TaskID    string `db:"task_id" json:"taskId"`
	Status    string `db:"status" json:"status"`
	CreatedAt string `db:"created_at" json:"createdAt"`
	TTL       int64  `db:"ttl" json:"ttl"` // want `not renamed automatically: the struct also has db tags`
}

var _ = record{}
