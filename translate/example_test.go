package translate_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/translate"
)

// A 2025-11-25 task becomes a 2026-07-28 one: ttl → ttlMs and
// pollInterval → pollIntervalMs, everything else verbatim (M-55).
func ExampleTaskToModern() {
	ttl, poll := int64(60_000), int64(2_000)
	old := legacy.Task{
		TaskID:        "task-1",
		Status:        legacy.StatusWorking,
		StatusMessage: "rendering",
		CreatedAt:     "2026-07-28T10:00:00Z",
		LastUpdatedAt: "2026-07-28T10:00:05Z",
		TTL:           &ttl,
		PollInterval:  &poll,
	}
	t := translate.TaskToModern(old)
	fmt.Println(t.TaskID, t.Status, t.StatusMessage, *t.TTLMs, *t.PollIntervalMs)
	// Output:
	// task-1 working rendering 60000 2000
}

// An upstream's flat 2026-07-28 creation result ({"resultType":"task", …})
// becomes the nested 2025-11-25 CreateTaskResult ({"task": {…}}) with the
// legacy key names; the legacy task always starts as working (L-12, L-17,
// L-21, L-22) and the model-immediate-response goes into _meta (L-23).
func ExampleCreateTaskResultToLegacy() {
	upstream := []byte(`{"resultType":"task","taskId":"task-1","status":"working",` +
		`"createdAt":"2026-07-28T10:00:00Z","lastUpdatedAt":"2026-07-28T10:00:00Z",` +
		`"ttlMs":60000,"pollIntervalMs":2000}`)
	res, err := translate.CreateTaskResultToLegacy(upstream, translate.CreateOptions{ImmediateResponse: "Rendering started."})
	if err != nil {
		log.Fatal(err)
	}
	out, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {
	//   "task": {
	//     "taskId": "task-1",
	//     "status": "working",
	//     "createdAt": "2026-07-28T10:00:00Z",
	//     "lastUpdatedAt": "2026-07-28T10:00:00Z",
	//     "ttl": 60000,
	//     "pollInterval": 2000
	//   },
	//   "_meta": {
	//     "io.modelcontextprotocol/model-immediate-response": "Rendering started."
	//   }
	// }
}
