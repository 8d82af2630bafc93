package driver

import (
	"bytes"
	"fmt"
	"strings"
)

// UnifiedDiff returns a unified diff (3 lines of context) turning old into
// new, with git-style "a/" and "b/" headers so `git apply` accepts it. It
// returns "" when the contents are equal.
func UnifiedDiff(name string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	const ctx = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	// Group ops into hunks separated by more than 2*ctx unchanged lines.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		h := ops[start:end]
		aStart, bStart := h[0].a, h[0].b
		var na, nb int
		for _, op := range h {
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, na), hunkRange(bStart, nb))
		for _, op := range h {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	// Lines are 1-based; an empty range names the line before it.
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

type lineOp struct {
	kind byte // ' ', '-', '+'
	text string
	a, b int // 0-based line index in old/new where this op starts
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines computes a line diff. Common prefix and suffix are trimmed first
// (fixes change a few lines), then the middle is solved by LCS; a middle too
// large for the table is emitted as one delete+insert block, which is still a
// correct diff.
func diffLines(a, b []string) []lineOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []lineOp
	for i := 0; i < pre; i++ {
		ops = append(ops, lineOp{' ', a[i], i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	ops = append(ops, lcsOps(ma, mb, pre, pre)...)
	for k := 0; k < suf; k++ {
		ia, ib := len(a)-suf+k, len(b)-suf+k
		ops = append(ops, lineOp{' ', a[ia], ia, ib})
	}
	return ops
}

func lcsOps(a, b []string, offA, offB int) []lineOp {
	var ops []lineOp
	if len(a)*len(b) > 4_000_000 {
		for i, s := range a {
			ops = append(ops, lineOp{'-', s, offA + i, offB})
		}
		for j, s := range b {
			ops = append(ops, lineOp{'+', s, offA + len(a), offB + j})
		}
		return ops
	}
	n, m := len(a), len(b)
	// t[i][j] = LCS length of a[i:], b[j:].
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, lineOp{' ', a[i], offA + i, offB + j})
			i++
			j++
		case i < n && (j == m || t[i+1][j] >= t[i][j+1]):
			ops = append(ops, lineOp{'-', a[i], offA + i, offB + j})
			i++
		default:
			ops = append(ops, lineOp{'+', b[j], offA + i, offB + j})
			j++
		}
	}
	return ops
}
