package lock_test

import (
	"testing"

	"github.com/lms-platform/lms/internal/lock/locktest"
)

func TestLockers(t *testing.T) {
	for name, b := range locktest.Backends(t) {
		t.Run(name, func(t *testing.T) { locktest.Conformance(t, b) })
	}
}
