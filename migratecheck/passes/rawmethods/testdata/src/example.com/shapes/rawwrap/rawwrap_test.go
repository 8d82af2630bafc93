package rawwrap

import "testing"

func TestResultsRejected(t *testing.T) {
	if err := Results(&Client{}, "t1"); err != nil && err.Error() != "method not found" {
		t.Fatal(err)
	}
}
