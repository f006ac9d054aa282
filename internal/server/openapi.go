package server

import (
	"encoding/json"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/limit"
)

// OpenAPI returns the API description without opening any storage: the
// routes are registered on a server whose handlers are never called.
func OpenAPI() ([]byte, error) {
	s := &Server{Config: &config.Config{}, Clock: clock.System{}, Limiter: limit.NewMemory(nil)}
	s.buildAPI()
	return json.MarshalIndent(s.API.OpenAPI(), "", "  ")
}
