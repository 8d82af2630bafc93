package settings

import (
	"reflect"
	"testing"
)

func TestParseLibrariesRoundTrip(t *testing.T) {
	in := "mcpgo=github.com/mark3labs/mcp-go,mcpgo=example.com/fork/,tmcmcp=,mcpgo=github.com/mark3labs/mcp-go"
	libs, err := ParseLibraries(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"mcpgo": {"github.com/mark3labs/mcp-go", "example.com/fork"}, "tmcmcp": {}}
	if !reflect.DeepEqual(libs, want) {
		t.Fatalf("ParseLibraries = %v, want %v", libs, want)
	}
	again, err := ParseLibraries(EncodeLibraries(libs))
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("round trip = %v, %v", again, err)
	}
	for _, bad := range []string{"mcpgo", "nosuch=x"} {
		if _, err := ParseLibraries(bad); err == nil {
			t.Errorf("ParseLibraries(%q) accepted", bad)
		}
	}
}

func TestParseRules(t *testing.T) {
	for in, off := range map[string][]string{
		"":                   nil,
		"all":                nil,
		"all,-MCP011,MCP000": {"MCP011"},
		"-MCP003,-mcp004":    {"MCP003", "MCP004"},
	} {
		en, err := ParseRules(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		for id, on := range en {
			wantOff := false
			for _, o := range off {
				wantOff = wantOff || o == id
			}
			if on == wantOff {
				t.Errorf("%q: %s enabled=%v", in, id, on)
			}
		}
	}
	en, err := ParseRules("MCP001,MCP014")
	if err != nil || !en["MCP001"] || !en["MCP014"] || en["MCP002"] || len(en) != 15 {
		t.Errorf("only-listed rules: %v %v", en, err)
	}
	for _, bad := range []string{"-MCP000", "MCP016", "all,-nope"} {
		if _, err := ParseRules(bad); err == nil {
			t.Errorf("ParseRules(%q) accepted", bad)
		}
	}
}

func TestIsMethodCallFunc(t *testing.T) {
	c := &Snapshot{MethodCallFuncs: []string{"Call", "SendNotification*"}}
	for name, want := range map[string]bool{"Call": true, "CallRaw": false, "SendNotification": true, "SendNotificationToClient": true, "Send": false} {
		if got := c.IsMethodCallFunc(name); got != want {
			t.Errorf("IsMethodCallFunc(%q) = %v", name, got)
		}
	}
}
