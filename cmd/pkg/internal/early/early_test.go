package early

import (
	"os/signal"
	"syscall"
	"testing"
)

// TestCaught: a SIGINT that comes after the initializer took the signals, before the
// command asks for them, waits for it in the first channel; a later call gets a channel
// of its own that signals reach too. A signal that reached neither would end the test's
// process; one that reached the wrong channel would hang it until the test times out.
func TestCaught(t *testing.T) {
	if ready == nil { // an earlier run of the test took the initializer's
		take()
	}
	<-ready // take's goroutine has taken them
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	first := Caught()
	if s := <-first; s != syscall.SIGINT {
		t.Fatalf("first channel got %v, want SIGINT", s)
	}
	second := Caught()
	if second == first {
		t.Fatal("a second call returned the initializer's channel again")
	}
	signal.Stop(first) // as the first command does when it ends
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if s := <-second; s != syscall.SIGTERM {
		t.Fatalf("second channel got %v, want SIGTERM", s)
	}
	signal.Stop(second)
}
