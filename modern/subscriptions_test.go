package modern

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// M-33, M-47, M-61: listen with taskIds, acknowledgement, graceful result.
func TestSubscriptionsListen(t *testing.T) {
	in := `{"notifications":{"taskIds":["t1","t2"],"toolsListChanged":true,"resourceSubscriptions":["file:///a"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`
	p, err := DecodeListenParams([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Notifications.RequestsTasks() || len(p.Notifications.TaskIDs) != 2 || string(p.Notifications.Other["toolsListChanged"]) != "true" || !p.Meta.TasksDeclared() {
		t.Errorf("decoded %+v", p)
	}
	msg, err := EncodeRequest(sid("listen-7"), MethodSubscriptionsListen, p)
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "SubscriptionsListenRequest", msg)
	schema(t, schemacheck.Ext, "TaskSubscriptionNotifications", mustMarshal(t, p.Notifications))
	req, _ := DecodeRequest(msg)
	jsonEqual(t, req.Params, []byte(in))

	// The server agrees to one task only (M-15: the client checks the subset).
	ack := AcknowledgedParams{Notifications: SubscriptionFilter{TaskIDs: []string{"t1"}}, SubscriptionID: req.ID}
	n, err := EncodeNotification(NotificationSubscriptionsAcknowledged, ack)
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "SubscriptionsAcknowledgedNotification", n)
	schema(t, schemacheck.Ext, "TaskSubscriptionAcknowledgedNotifications", mustMarshal(t, ack.Notifications))
	if !strings.Contains(string(n), `"io.modelcontextprotocol/subscriptionId":"listen-7"`) {
		t.Errorf("ack lacks subscriptionId: %s", n)
	}
	nreq, _ := DecodeRequest(n)
	back, err := DecodeAcknowledgedParams(nreq.Params)
	if err != nil || back.SubscriptionID.Raw() != "listen-7" || len(back.Notifications.TaskIDs) != 1 {
		t.Errorf("ack decode: %+v %v", back, err)
	}
	// An empty acknowledged set is [] (not absent).
	empty := mustMarshal(t, AcknowledgedParams{Notifications: SubscriptionFilter{TaskIDs: []string{}}, SubscriptionID: nid(3)})
	if !strings.Contains(string(empty), `"taskIds":[]`) || !strings.Contains(string(empty), `"io.modelcontextprotocol/subscriptionId":3`) {
		t.Errorf("empty ack: %s", empty)
	}

	// Graceful end of the subscription.
	lr := ListenResult{SubscriptionID: req.ID}
	resp, err := EncodeResult(req.ID, lr)
	if err != nil {
		t.Fatal(err)
	}
	schema(t, schemacheck.Modern, "SubscriptionsListenResultResponse", resp)
	dr, err := DecodeResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := DecodeListenResult(dr.Result)
	if err != nil || lb.SubscriptionID.Raw() != "listen-7" {
		t.Errorf("listen result: %+v %v", lb, err)
	}

	// Strictness and errors.
	_, err = json.Marshal(AcknowledgedParams{})
	wantErr(t, err, rpc.CodeInternalError, "subscriptionId is required", "M-47")
	_, err = json.Marshal(ListenResult{})
	wantErr(t, err, rpc.CodeInternalError, "subscriptionId is required")
	_, err = DecodeListenParams([]byte(`{"_meta":{}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `subscriptions/listen params: missing required field "notifications"`)
	_, err = DecodeListenParams([]byte(`{"notifications":{"taskIds":"t1"}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"notifications.taskIds" must be an array of strings`)
	_, err = DecodeListenParams([]byte(`{"notifications":{"taskIds":["a",2]}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"notifications.taskIds[1]" must be a string`)
	_, err = DecodeAcknowledgedParams([]byte(`{"notifications":{},"_meta":{"io.modelcontextprotocol/subscriptionId":true}}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"_meta.io.modelcontextprotocol/subscriptionId" must be a string or an integer`)
	_, err = DecodeAcknowledgedParams(nil)
	wantErr(t, err, rpc.CodeInvalidParams, `missing required field "notifications"`)
	_, err = DecodeListenResult([]byte(`{"resultType":"input_required"}`))
	wantErr(t, err, rpc.CodeInvalidParams, `"resultType" is "input_required"`)
}

// M-63: notifications/tasks carries the full DetailedTask plus subscriptionId.
func TestTaskStatusNotification(t *testing.T) {
	for def, d := range detailedVariants() {
		t.Run(def, func(t *testing.T) {
			p := TaskStatusNotificationParams{DetailedTask: d, SubscriptionID: sid("listen-7"), Meta: Object{"com.example/x": json.RawMessage(`1`)}}
			pb := mustMarshal(t, p)
			schema(t, schemacheck.Ext, "TaskStatusNotificationParams", pb)
			if strings.Contains(string(pb), "resultType") {
				t.Errorf("a notification has no resultType: %s", pb)
			}
			n, err := EncodeNotification(NotificationTasks, p)
			if err != nil {
				t.Fatal(err)
			}
			schema(t, schemacheck.Ext, "TaskStatusNotification", n)
			req, err := DecodeRequest(n)
			if err != nil || req.IsCall() {
				t.Fatalf("notification decode: %v", err)
			}
			back, err := DecodeTaskStatusNotificationParams(req.Params)
			if err != nil {
				t.Fatal(err)
			}
			if back.SubscriptionID.Raw() != "listen-7" || string(back.Meta["com.example/x"]) != "1" || back.Status != d.Status {
				t.Errorf("decoded %+v", back)
			}
			jsonEqual(t, mustMarshal(t, back), pb)
		})
	}
	_, err := json.Marshal(TaskStatusNotificationParams{DetailedTask: detailedVariants()["WorkingTask"]})
	wantErr(t, err, rpc.CodeInternalError, "subscriptionId is required")
	_, err = json.Marshal(TaskStatusNotificationParams{DetailedTask: DetailedTask{Task: baseTask(StatusCompleted)}, SubscriptionID: nid(1)})
	wantErr(t, err, rpc.CodeInternalError, "requires result")
	// Lenient: a notification without subscriptionId (not on a listen stream) decodes.
	if _, err := DecodeTaskStatusNotificationParams([]byte(`{"taskId":"a","status":"working"}`)); err != nil {
		t.Error(err)
	}
}
