package mcpio

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/modern"
)

// The framing of a task listen that the modern face and the demo share
// (M-47): the acknowledgement first, keep-alives while it waits, the
// graceful listen result when the server closes. What a listen reports in
// between stays with each server.

// AcknowledgeListen sends the acknowledgement of task listen id (M-47): it
// comes first and names the task ids the server agreed to serve.
func AcknowledgeListen(send func(jsonrpc.Message) error, id jsonrpc.ID, acked []string) error {
	b, err := modern.AcknowledgedParams{
		Notifications:  modern.SubscriptionFilter{TaskIDs: acked},
		SubscriptionID: id,
	}.MarshalJSON()
	if err != nil {
		return err
	}
	return send(&jsonrpc.Request{Method: modern.NotificationSubscriptionsAcknowledged, Params: b})
}

// ListenKeepAlive is a listen's keep-alive clock: a tick every period when
// the stream can carry a keep-alive (ping is set) and period is positive;
// otherwise a nil channel, which never fires. stop releases the clock.
func ListenKeepAlive(ping func() error, period time.Duration) (tick <-chan time.Time, stop func()) {
	if ping == nil || period <= 0 {
		return nil, func() {}
	}
	t := time.NewTicker(period)
	return t.C, t.Stop
}

// EndListen sends the graceful result of task listen id before the server
// tears the stream down (M-47), with meta as its other _meta keys.
func EndListen(send func(jsonrpc.Message) error, id jsonrpc.ID, meta modern.Object) error {
	res, err := modern.ListenResult{SubscriptionID: id, Meta: meta}.MarshalJSON()
	if err != nil {
		return err
	}
	return send(&jsonrpc.Response{ID: id, Result: res})
}
