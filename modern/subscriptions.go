package modern

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// subscriptions/listen (core) with the tasks extension's notifications.taskIds
// (M-33), the notifications/subscriptions/acknowledged that opens the stream,
// notifications/tasks on it, and the listen result that closes it.

// SubscriptionFilter is the notifications object of subscriptions/listen and
// of its acknowledgement. TaskIDs is the extension's field; the core fields
// (toolsListChanged, resourceSubscriptions, ...) are kept raw in Other.
type SubscriptionFilter struct {
	// TaskIDs: nil = absent; an empty non-nil slice is sent as [].
	TaskIDs []string
	Other   map[string]json.RawMessage
}

// RequestsTasks reports whether the filter asks for task notifications, which
// requires the tasks extension on the request (M-61).
func (f SubscriptionFilter) RequestsTasks() bool { return len(f.TaskIDs) > 0 }

func readFilter(r *reader) (SubscriptionFilter, error) {
	var f SubscriptionFilter
	var err error
	if f.TaskIDs, err = r.strList("taskIds"); err != nil {
		return f, err
	}
	f.Other = r.rest("taskIds")
	return f, nil
}

// DecodeSubscriptionFilter decodes a notifications filter.
func DecodeSubscriptionFilter(data []byte) (SubscriptionFilter, error) {
	r, err := topReader("notifications", data)
	if err != nil {
		return SubscriptionFilter{}, err
	}
	return readFilter(r)
}

// MarshalJSON encodes the filter.
func (f SubscriptionFilter) MarshalJSON() ([]byte, error) {
	w := newWriter()
	w.extra(f.Other)
	if f.TaskIDs != nil {
		w.field("taskIds", f.TaskIDs)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (f *SubscriptionFilter) UnmarshalJSON(data []byte) error {
	return decodeInto(f, DecodeSubscriptionFilter, data)
}

// ListenParams are the params of subscriptions/listen.
type ListenParams struct {
	Notifications SubscriptionFilter
	Meta          *RequestMeta
	Extra         map[string]json.RawMessage
}

// DecodeListenParams decodes subscriptions/listen params; notifications is required.
func DecodeListenParams(params []byte) (ListenParams, error) {
	r, f, err := readNotificationsParams(MethodSubscriptionsListen+" params", params)
	if err != nil {
		return ListenParams{}, err
	}
	p := ListenParams{Notifications: f}
	if p.Meta, err = readMetaPtr(r); err != nil {
		return p, err
	}
	p.Extra = r.rest("notifications", "_meta")
	return p, nil
}

// MarshalJSON encodes {notifications, _meta?}.
func (p ListenParams) MarshalJSON() ([]byte, error) {
	w := newWriter()
	w.field("notifications", p.Notifications)
	w.extra(p.Extra)
	if p.Meta != nil {
		w.field("_meta", *p.Meta)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (p *ListenParams) UnmarshalJSON(data []byte) error {
	return decodeInto(p, DecodeListenParams, data)
}

// AcknowledgedParams are the params of notifications/subscriptions/acknowledged,
// the first message on a listen stream: the subset of the filter the server
// agreed to honour (M-15, M-33, M-47) and the subscription id (= the listen
// request's JSON-RPC id).
type AcknowledgedParams struct {
	Notifications  SubscriptionFilter
	SubscriptionID jsonrpc.ID // required on encode
	Meta           Object     // other _meta keys
}

// DecodeAcknowledgedParams decodes the acknowledgement params leniently
// (a missing subscriptionId is tolerated; notifications is required).
func DecodeAcknowledgedParams(params []byte) (AcknowledgedParams, error) {
	r, f, err := readNotificationsParams(NotificationSubscriptionsAcknowledged+" params", params)
	if err != nil {
		return AcknowledgedParams{}, err
	}
	p := AcknowledgedParams{Notifications: f}
	p.SubscriptionID, p.Meta, err = readNotificationMeta(r)
	return p, err
}

// readNotificationsParams opens params (named ctx in errors) whose
// "notifications" filter is required, as a listen and its acknowledgement
// carry it, and reads that filter; the reader is for the other members.
func readNotificationsParams(ctx string, params []byte) (*reader, SubscriptionFilter, error) {
	if isNull(params) {
		return nil, SubscriptionFilter{}, invalidParams(ctx, "missing required field %q", "notifications")
	}
	r, err := topReader(ctx, params)
	if err != nil {
		return nil, SubscriptionFilter{}, err
	}
	if !r.has("notifications") {
		return nil, SubscriptionFilter{}, r.missing("notifications")
	}
	c, err := r.child("notifications")
	if err != nil {
		return nil, SubscriptionFilter{}, err
	}
	f, err := readFilter(c)
	if err != nil {
		return nil, SubscriptionFilter{}, err
	}
	return r, f, nil
}

// readNotificationMeta splits a notification's _meta into the subscription id
// and the rest.
func readNotificationMeta(r *reader) (jsonrpc.ID, Object, error) {
	meta, err := r.object("_meta")
	if err != nil || meta == nil {
		return jsonrpc.ID{}, nil, err
	}
	mr := &reader{ctx: r.ctx, prefix: "_meta.", m: meta}
	id, _, err := mr.id(MetaKeySubscriptionID)
	if err != nil {
		return jsonrpc.ID{}, nil, err
	}
	delete(meta, MetaKeySubscriptionID)
	if len(meta) == 0 {
		meta = nil
	}
	return id, meta, nil
}

// notificationMeta builds a _meta with the subscription id (when valid).
func notificationMeta(id jsonrpc.ID, meta Object) Object {
	if !id.IsValid() {
		return meta
	}
	out := meta.Clone()
	if out == nil {
		out = Object{}
	}
	b, _ := marshal(idValue(id)) // a string or int64 always encodes
	out[MetaKeySubscriptionID] = b
	return out
}

// MarshalJSON encodes the acknowledgement params; SubscriptionID is required (M-47).
func (p AcknowledgedParams) MarshalJSON() ([]byte, error) {
	if !p.SubscriptionID.IsValid() {
		return nil, encodeErr("acknowledged params: _meta.%s is required (M-47)", MetaKeySubscriptionID)
	}
	w := newWriter()
	w.field("notifications", p.Notifications)
	w.field("_meta", notificationMeta(p.SubscriptionID, p.Meta))
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (p *AcknowledgedParams) UnmarshalJSON(data []byte) error {
	return decodeInto(p, DecodeAcknowledgedParams, data)
}

// ListenResult is the result of subscriptions/listen, sent only when the
// server ends the subscription gracefully: {resultType:"complete",
// _meta:{subscriptionId}}.
type ListenResult struct {
	SubscriptionID jsonrpc.ID // required on encode
	Meta           Object     // other _meta keys
}

// DecodeListenResult decodes the listen result leniently.
func DecodeListenResult(data []byte) (ListenResult, error) {
	r, err := topReader(MethodSubscriptionsListen+" result", data)
	if err != nil {
		return ListenResult{}, err
	}
	if err := readResultType(r, "", ResultComplete); err != nil {
		return ListenResult{}, err
	}
	id, meta, err := readNotificationMeta(r)
	if err != nil {
		return ListenResult{}, err
	}
	return ListenResult{SubscriptionID: id, Meta: meta}, nil
}

// MarshalJSON encodes the listen result; SubscriptionID is required.
func (l ListenResult) MarshalJSON() ([]byte, error) {
	if !l.SubscriptionID.IsValid() {
		return nil, encodeErr("subscriptions/listen result: _meta.%s is required", MetaKeySubscriptionID)
	}
	w := newWriter()
	w.field("resultType", ResultComplete)
	w.field("_meta", notificationMeta(l.SubscriptionID, l.Meta))
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (l *ListenResult) UnmarshalJSON(data []byte) error {
	return decodeInto(l, DecodeListenResult, data)
}

// TaskStatusNotificationParams are the params of notifications/tasks: the
// full DetailedTask as tasks/get would return it at that moment (no
// resultType) plus _meta.subscriptionId of the listen stream (M-63).
type TaskStatusNotificationParams struct {
	DetailedTask
	SubscriptionID jsonrpc.ID // required on encode
	Meta           Object     // other _meta keys
}

// DecodeTaskStatusNotificationParams decodes notifications/tasks params
// leniently (a missing subscriptionId is tolerated).
func DecodeTaskStatusNotificationParams(params []byte) (TaskStatusNotificationParams, error) {
	r, err := topReader(NotificationTasks+" params", params)
	if err != nil {
		return TaskStatusNotificationParams{}, err
	}
	d, err := readDetailed(r)
	if err != nil {
		return TaskStatusNotificationParams{}, err
	}
	id, meta, err := readNotificationMeta(r)
	if err != nil {
		return TaskStatusNotificationParams{}, err
	}
	return TaskStatusNotificationParams{DetailedTask: d, SubscriptionID: id, Meta: meta}, nil
}

// MarshalJSON encodes strictly: a valid DetailedTask and a subscription id (M-47).
func (n TaskStatusNotificationParams) MarshalJSON() ([]byte, error) {
	if err := n.DetailedTask.Validate(); err != nil {
		return nil, err
	}
	if !n.SubscriptionID.IsValid() {
		return nil, encodeErr("notifications/tasks params: _meta.%s is required (M-47)", MetaKeySubscriptionID)
	}
	w := newWriter()
	w.field("_meta", notificationMeta(n.SubscriptionID, n.Meta))
	writeDetailed(w, n.DetailedTask)
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (n *TaskStatusNotificationParams) UnmarshalJSON(data []byte) error {
	return decodeInto(n, DecodeTaskStatusNotificationParams, data)
}
