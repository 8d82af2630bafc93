package waitrule

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
)

// The rule's table: every testdata/*.txtar file is one row (record,
// snapshot, mode, shown → step), run through Decide and Step.Reply.
func TestTable(t *testing.T) {
	s := &transcript.Suite{
		Handlers: map[string]transcript.Handler{"Decide": decideRow},
		Validate: func(schema, def string, msg []byte) error {
			return errors.New("the wait rule's rows carry no protocol messages")
		},
		AllowNoSchema: func(section string) bool { return section == "step.out" },
		Directives:    []string{"mode", "shown"},
		Require:       []string{"ids"},
	}
	if n := s.Run(t, "testdata/*.txtar"); n < 20 {
		t.Errorf("only %d rows; every branch of the rule needs one", n)
	}
}

var (
	kindNames  = map[Kind]string{Keep: "keep", Answer: "answer", Fail: "fail", Present: "present"}
	endNames   = map[End]string{EndNone: "none", EndCompleted: "completed", EndFailed: "failed", EndCancelled: "cancelled", EndNoResult: "no-result", EndNotTerminal: "not-terminal", EndBadStatus: "bad-status", EndLost: "lost", EndStoreDown: "store-down"}
	fromNames  = map[From]string{FromRecord: "record", FromSnapshot: "snapshot", FromGone: "gone"}
	replyNames = map[Reply]string{ReplyNone: "none", ReplyPayload: "payload", ReplyPlainResult: "plain-result", ReplyTaskError: "task-error", ReplyCancelled: "cancelled", ReplyCancelledPlain: "cancelled-plain", ReplyNoResult: "no-result", ReplyNotTerminal: "not-terminal", ReplyBadStatus: "bad-status", ReplyNotFound: "not-found", ReplyLostPlain: "lost-plain", ReplyStoreUnavailable: "store-unavailable"}
	modes      = map[string]Mode{"result": ModeResult, "plain": ModePlain}
)

// step is a Step as a row's step.out spells it.
type step struct {
	Kind    string   `json:"kind"`
	End     string   `json:"end"`
	From    string   `json:"from"`
	Reply   string   `json:"reply"`
	Present []string `json:"present,omitempty"`
}

func decideRow(f *transcript.File) (transcript.Output, error) {
	var in Input
	if err := decodeSection(f, "record.in", &in.Record); err != nil {
		return nil, err
	}
	if err := decodeSection(f, "snapshot.in", &in.Snapshot); err != nil {
		return nil, err
	}
	mode, ok := modes[f.Value("mode")]
	if !ok {
		return nil, fmt.Errorf("mode %q: want result or plain", f.Value("mode"))
	}
	shown := strings.Fields(f.Value("shown"))
	in.Shown = func(k string) bool { return slices.Contains(shown, k) }
	st := Decide(in)
	out := transcript.Output{}
	out.Add("step.out", step{Kind: kindNames[st.Kind], End: endNames[st.End], From: fromNames[st.From], Reply: replyNames[st.Reply(mode)], Present: st.Present})
	return out, nil
}

func decodeSection(f *transcript.File, name string, v any) error {
	m, err := f.Message(name)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(m)))
	dec.DisallowUnknownFields() // a misspelt field would silently be zero
	return dec.Decode(v)
}

// A wait with no Shown func (the parked hub's first look) presents every
// key the store has no answer for.
func TestDecideWithoutShown(t *testing.T) {
	st := Decide(Input{
		Record:   Record{Status: "working", Follows: true, Answered: []string{"b"}},
		Snapshot: Snapshot{Status: "input_required", InputKeys: []string{"c", "b", "a"}},
	})
	if st.Kind != Present || !slices.Equal(st.Present, []string{"a", "c"}) {
		t.Fatalf("step %+v, want present [a c]", st)
	}
}

// Every Reply is spelt in the table's names, so a new one cannot go
// untested silently.
func TestNamesComplete(t *testing.T) {
	if len(replyNames) != int(ReplyStoreUnavailable)+1 || len(endNames) != int(EndStoreDown)+1 {
		t.Errorf("name tables out of date: %d replies, %d ends", len(replyNames), len(endNames))
	}
}
