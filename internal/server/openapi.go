package server

import (
	"encoding/json"
	"log/slog"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/limit"
)

// OpenAPI returns the API description without opening any storage: the
// routes are registered on a server whose handlers are never called.
func OpenAPI() ([]byte, error) {
	// A logger that drops everything: building the routes may warn (no
	// PDF fonts on the machine that generates the description).
	s := &Server{Config: &config.Config{}, Clock: clock.System{}, Limiter: limit.NewMemory(nil),
		Log: slog.New(slog.DiscardHandler)}
	s.buildAPI()
	return json.MarshalIndent(s.API.OpenAPI(), "", "  ")
}
