package httpx

import (
	"context"
	"log/slog"
)

// Log is the logger for work done while serving the request ctx belongs
// to: the server's logger with the request's id, so a line written deep in
// a service can be found with the request that caused it. Outside a
// request it is slog.Default().
func Log(ctx context.Context) *slog.Logger {
	if info := infoFrom(ctx); info != nil && info.logger != nil {
		return info.logger.With("request_id", info.id)
	}
	return slog.Default()
}
