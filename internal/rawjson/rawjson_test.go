package rawjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestMembersKeepBytes(t *testing.T) {
	in := []byte(` { "a" : 1.50 , "b\u0041":"x\u003cy" ,"a":[1, {"c":"}"}], "e": {} } `)
	ms, err := Members(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Key+"="+string(m.RawKey)+":"+string(m.Val))
	}
	want := []string{`a="a":1.50`, `bA="b\u0041":"x\u003cy"`, `a="a":[1, {"c":"}"}]`, `e="e":{}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Members = %q, want %q", got, want)
	}
	if out := string(Append(nil, ms)); out != `{"a":1.50,"b\u0041":"x\u003cy","a":[1, {"c":"}"}],"e":{}}` {
		t.Fatalf("Append = %s", out)
	}
	if out, err := AppendCompact(nil, ms); err != nil || string(out) != `{"a":1.50,"b\u0041":"x\u003cy","a":[1,{"c":"}"}],"e":{}}` {
		t.Fatalf("AppendCompact = %s, %v", out, err)
	}
	if v, ok := Lookup(ms, "a"); !ok || string(v) != `[1, {"c":"}"}]` {
		t.Fatalf("Lookup(a) = %s, %v; want the last duplicate", v, ok)
	}
	if ms, err := Members([]byte(" {\n} ")); err != nil || len(ms) != 0 {
		t.Fatalf("empty object: %v, %v", ms, err)
	}
	if _, err := Members([]byte(`[1]`)); err == nil {
		t.Fatal("an array was split into members")
	}
}

func TestEdits(t *testing.T) {
	ms, _ := Members([]byte(`{"x":1,"y":2,"x":3,"z":4}`))
	if out := string(Append(nil, Dedup(ms))); out != `{"y":2,"x":3,"z":4}` {
		t.Fatalf("Dedup = %s, want the last x at its own position", out)
	}
	if out := string(Append(nil, With(ms, "x", json.RawMessage(`"new"`)))); out != `{"y":2,"x":"new","z":4}` {
		t.Fatalf("With(x) = %s", out)
	}
	if out := string(Append(nil, With(ms, "n<", json.RawMessage(`null`)))); out != `{"x":1,"y":2,"x":3,"z":4,"n<":null}` {
		t.Fatalf("With(new key) = %s", out)
	}
	if out := string(Append(nil, Without(ms, "x", "z"))); out != `{"y":2}` {
		t.Fatalf("Without = %s", out)
	}
	if out := string(Append(nil, ms)); out != `{"x":1,"y":2,"x":3,"z":4}` {
		t.Fatalf("edits changed their input: %s", out)
	}
}

func TestObject(t *testing.T) {
	o, err := Decode([]byte(`{"b":{ "k" : 1 },"a":"<&>","b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Keys(); !reflect.DeepEqual(got, []string{"a", "b"}) || o.Len() != 2 || !o.Has("b") || o.Has("c") {
		t.Fatalf("Keys = %v", got)
	}
	c := o.Clone()
	c.Del("a")
	if err := c.Set("s", "<tag> & more"); err != nil {
		t.Fatal(err)
	}
	c.Put("b", json.RawMessage(`[ 1, 2 ]`))
	if got := string(c.Bytes()); got != `{"b":[1,2],"s":"<tag> & more"}` {
		t.Fatalf("edited clone = %s", got)
	}
	if got := string(o.Bytes()); got != `{"a":"<&>","b":2}` {
		t.Fatalf("original after editing the clone = %s", got)
	}
	if m := o.Map(); len(m) != 2 || string(m["a"]) != `"<&>"` {
		t.Fatalf("Map = %v", m)
	}
	var zero Object
	zero.Put("bad", json.RawMessage(`{`))
	if got := string(zero.Bytes()); got != `{"bad":null}` {
		t.Fatalf("invalid value written as %s", got)
	}
	if err := zero.Set("ch", make(chan int)); err == nil {
		t.Fatal("Set of an unencodable value succeeded")
	}
}

func TestScalars(t *testing.T) {
	for in, want := range map[string]string{"": "nothing", " {}": "an object", "[]": "an array", `"s"`: "a string",
		"true": "a boolean", "false": "a boolean", "null": "null", "-1e3": "a number"} {
		if got := Kind([]byte(in)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", in, got, want)
		}
	}
	if !IsNull([]byte(" null ")) || IsNull(nil) || !IsAbsent(nil) || !IsAbsent([]byte(" null")) || IsAbsent([]byte("0")) {
		t.Error("IsNull/IsAbsent")
	}
	if b, err := Marshal(map[string]string{"k": "<a&b>"}); err != nil || string(b) != `{"k":"<a&b>"}` {
		t.Errorf("Marshal = %s, %v (no HTML escaping, no newline)", b, err)
	}
}

// FuzzMembers: for every valid object, writing its members back gives the
// same JSON value, and Dedup keeps one member per key.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, ` {"a" : "\"}" , "b":[{"c":[]}] ,"a":null}`, `{"\u00e9":-0.0e+1}`, "{\"\xff\xfe\":1,\"é\":2}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || !IsObject(b) {
			return
		}
		ms, err := Members(b)
		if err != nil {
			t.Fatalf("Members(%s): %v", b, err)
		}
		var want, got bytes.Buffer
		_ = json.Compact(&want, b)
		out, err := AppendCompact(nil, ms)
		if err != nil {
			t.Fatalf("AppendCompact: %v", err)
		}
		_ = json.Compact(&got, out)
		if want.String() != got.String() {
			t.Fatalf("round trip of %s = %s", b, out)
		}
		for _, m := range ms {
			var key string
			if err := json.Unmarshal(m.RawKey, &key); err != nil || key != m.Key {
				t.Fatalf("key %s read as %q, encoding/json reads %q (%v)", m.RawKey, m.Key, key, err)
			}
		}
		seen := map[string]bool{}
		for _, m := range Dedup(ms) {
			if seen[m.Key] {
				t.Fatalf("Dedup kept %q twice", m.Key)
			}
			seen[m.Key] = true
		}
	})
}

// All walks an object's members as Members splits them, stops when asked,
// and allocates nothing: the router and the meters walk every message with
// it (one pass each instead of a reflective decode).
func TestAll(t *testing.T) {
	in := []byte(` { "a" : 1.50 , "b\u0041":"x" ,"a":[1, {"c":"}"}], "e": {} } `)
	var got []string
	for k, v := range All(in) {
		got = append(got, string(KeyBytes(k))+"="+string(v))
	}
	if want := []string{`a=1.50`, `bA="x"`, `a=[1, {"c":"}"}]`, `e={}`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("All = %q, want %q", got, want)
	}
	n := 0
	for range All(in) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("break after 2 members: walked %d", n)
	}
	for _, b := range []string{`[1]`, `"x"`, ``, ` { } `} {
		for k := range All([]byte(b)) {
			t.Fatalf("All(%s) yielded %s", b, k)
		}
	}
	if k := KeyBytes([]byte("\"\xff\"")); string(k) != "\uFFFD" {
		t.Fatalf("KeyBytes of an invalid UTF-8 key = %q, want encoding/json's U+FFFD", k)
	}
	plain := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	allocs := testing.AllocsPerRun(100, func() {
		for k, v := range All(plain) {
			if string(KeyBytes(k)) == "method" && len(v) == 0 {
				t.Fatal("empty method")
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("All allocated %.0f times per walk, want 0", allocs)
	}
}

// Dedup of an object of many members keeps the last of each key at its
// position, in linear time: 200,000 members took minutes with the pairwise
// scan, so this test would time out on it.
func TestDedupManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteByte('{')
	const n = 200_000
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"k7":"last"}`)
	ms, err := Members([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	out := Dedup(ms)
	if len(out) != n || out[len(out)-1].Key != "k7" || string(out[len(out)-1].Val) != `"last"` || out[7].Key != "k8" {
		t.Fatalf("Dedup: %d members, last %q=%s", len(out), out[len(out)-1].Key, out[len(out)-1].Val)
	}
}

func TestDepthExceeds(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  int
	}{
		{`{}`, 1, -1},
		{`{"a":[]}`, 1, 5},
		{`[[["[[[[[[", "]]]]]"]]]`, 3, -1},
		{`[[["\"[[[[[["]]]`, 3, -1},
		{`[[[[`, 3, 3},
		{`"unterminated [[[[`, 1, -1},
		{strings.Repeat("[", 1_000_000), 128, 128},
	} {
		if got := DepthExceeds([]byte(tc.in), tc.limit); got != tc.want {
			t.Errorf("DepthExceeds(%.40q, %d) = %d, want %d", tc.in, tc.limit, got, tc.want)
		}
	}
}
