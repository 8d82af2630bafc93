package mcpio

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/modern"
)

// A task listen's framing: the acknowledgement names the agreed task ids
// under the subscription id, the graceful end is the listen result for the
// same id, and no keep-alive clock runs without a way to send one.
func TestListenFraming(t *testing.T) {
	id, err := jsonrpc.MakeID("L1")
	if err != nil {
		t.Fatal(err)
	}
	var sent []jsonrpc.Message
	send := func(m jsonrpc.Message) error { sent = append(sent, m); return nil }
	if err := AcknowledgeListen(send, id, []string{"t1", "t2"}); err != nil {
		t.Fatal(err)
	}
	if err := EndListen(send, id, modern.Object{"k": json.RawMessage(`"v"`)}); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 {
		t.Fatalf("sent %d messages, want 2", len(sent))
	}
	ack, ok := sent[0].(*jsonrpc.Request)
	if !ok || ack.Method != modern.NotificationSubscriptionsAcknowledged || ack.IsCall() {
		t.Fatalf("first message %#v, want the acknowledgement notification", sent[0])
	}
	var ap struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(ack.Params, &ap); err != nil {
		t.Fatal(err)
	}
	if len(ap.Notifications.TaskIDs) != 2 || ap.Notifications.TaskIDs[1] != "t2" || string(ap.Meta[modern.MetaKeySubscriptionID]) != `"L1"` {
		t.Fatalf("acknowledgement params %s", ack.Params)
	}
	res, ok := sent[1].(*jsonrpc.Response)
	if !ok || res.ID != id {
		t.Fatalf("last message %#v, want the response to the listen", sent[1])
	}
	var rp struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(res.Result, &rp); err != nil {
		t.Fatal(err)
	}
	if string(rp.Meta[modern.MetaKeySubscriptionID]) != `"L1"` || string(rp.Meta["k"]) != `"v"` {
		t.Fatalf("listen result %s", res.Result)
	}
	if tick, stop := ListenKeepAlive(nil, 1); tick != nil {
		t.Fatal("a keep-alive clock runs without a ping")
	} else {
		stop()
	}
	if tick, stop := ListenKeepAlive(func() error { return nil }, 0); tick != nil {
		t.Fatal("a keep-alive clock runs with a zero period")
	} else {
		stop()
	}
	tick, stop := ListenKeepAlive(func() error { return nil }, 1<<40)
	defer stop()
	if tick == nil {
		t.Fatal("no keep-alive clock with a ping and a period")
	}
}
