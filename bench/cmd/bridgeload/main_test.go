package main

import (
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	c, err := parse(nil)
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, p := range []string{"echo", "getrate", "waiters", "delay"} {
		if !c.phases[p] {
			t.Errorf("phase %s not on by default", p)
		}
	}
	if c.waiters != 10000 || c.getWaiters != 100 || c.timeout <= 0 {
		t.Errorf("defaults: %d waiters, %d get waiters, timeout %s", c.waiters, c.getWaiters, c.timeout)
	}
	c, err = parse([]string{"-phases", "delay, echo"})
	if err != nil || len(c.phases) != 2 || !c.phases["delay"] || !c.phases["echo"] {
		t.Fatalf("-phases delay,echo: %v %v", c.phases, err)
	}
	for _, bad := range [][]string{
		{"-phases", "echo,bogus"},
		{"-waiters", "1000", "-waiter-tasks", "300"},
		{"-waiter-tasks", "0"},
		{"-echo-conc", "0"},
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%s) accepted", strings.Join(bad, " "))
		}
	}
}
