package cache_test

import (
	"testing"

	"github.com/lms-platform/lms/internal/cache/cachetest"
)

func TestCaches(t *testing.T) {
	for name, b := range cachetest.Backends(t) {
		t.Run(name, func(t *testing.T) { cachetest.Conformance(t, b) })
	}
}
