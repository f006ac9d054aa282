package server

import (
	"encoding/json"
	"io"
	"log/slog"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/limit"
)

// OpenAPI returns the API description without opening any storage: the
// routes are registered on a server whose handlers are never called.
func OpenAPI() ([]byte, error) {
	// A logger that drops lines: building the routes may warn (missing PDF
	// fonts), which is no concern of the description.
	s := &Server{Config: &config.Config{}, Clock: clock.System{}, Limiter: limit.NewMemory(nil),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s.buildAPI()
	return json.MarshalIndent(s.API.OpenAPI(), "", "  ")
}
