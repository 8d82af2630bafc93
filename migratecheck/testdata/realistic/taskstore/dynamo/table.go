package dynamo

import (
	"encoding/json"
	"time"
)

// Item is the attribute map the table client writes.
type Item map[string]any

// ToItem converts a record for PutItem; DynamoDB deletes the item after
// ExpiresAt (the table's TTL attribute).
func ToItem(r TaskRecord) (Item, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var it Item
	err = json.Unmarshal(data, &it)
	it["pk"], it["sk"] = r.PK, r.SK
	return it, err
}

// NewRecord builds the record of a freshly created task.
func NewRecord(owner, id string, keep time.Duration) TaskRecord {
	now := time.Now().UTC()
	return TaskRecord{
		PK:        "owner#" + owner,
		SK:        "task#" + id,
		Owner:     owner,
		ExpiresAt: now.Add(keep).Unix(),
		Task:      StoredTask{TaskID: id, Status: "working", CreatedAt: now.Format(time.RFC3339), TTL: keep.Milliseconds()},
	}
}
