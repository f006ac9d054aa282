package lmsctl

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/lms-platform/lms/client"
)

// Exit codes of lmsctl. They are part of its interface (docs/agents.md): scripts
// branch on them, so a number never changes its meaning.
const (
	ExitOK       = 0
	ExitFailure  = 1 // anything not listed below
	ExitChoices  = 2 // a choice is needed (details.choices lists them)
	ExitUsage    = 3 // bad command line or input; nothing was sent
	ExitAuth     = 4 // not logged in, token refused, permission or scope missing
	ExitNotFound = 5
	ExitConflict = 6 // conflict or validation refused by the server
	ExitLimited  = 7 // RATE_LIMITED: details.retryAfter says when to retry
	ExitServer   = 8 // the server failed or could not be reached
)

// Failure is an error as lmsctl reports it: {error: {code, message,
// details}} on standard error, and an exit code.
type Failure struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	Exit    int            `json:"-"`
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// setDetail sets one detail. Failures made without details (a network
// error, a usage error) have no map yet, and whatever adds to a failure
// must not depend on how it was made.
func (f *Failure) setDetail(key string, value any) {
	if f.Details == nil {
		f.Details = map[string]any{}
	}
	f.Details[key] = value
}

// addNote adds a sentence to the message, such as what a half-done
// command left behind and how to finish it.
func (f *Failure) addNote(note string) {
	if f.Message != "" && !strings.HasSuffix(f.Message, ".") {
		f.Message += "."
	}
	f.Message = strings.TrimSpace(f.Message + " " + note)
}

// panicFailure reports a panic, which is a bug of lmsctl, as a failure
// with the generic exit code: left alone, Go would exit with 2, which
// scripts read as "a choice is needed".
func panicFailure(v any) *Failure {
	return &Failure{Code: "INTERNAL", Exit: ExitFailure, Details: map[string]any{"stack": string(debug.Stack())},
		Message: fmt.Sprintf("lmsctl failed unexpectedly (a bug: please report it with details.stack): %v", v)}
}

func usagef(format string, args ...any) *Failure {
	return &Failure{Code: "USAGE", Message: fmt.Sprintf(format, args...), Exit: ExitUsage}
}

// failureOf turns any error into a Failure: API answers by their status,
// everything else as a failure to reach the server.
func failureOf(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		var netErr net.Error
		if errors.As(err, &netErr) {
			return &Failure{Code: "UNAVAILABLE", Message: err.Error(), Exit: ExitServer}
		}
		return &Failure{Code: "FAILED", Message: err.Error(), Exit: ExitFailure}
	}
	out := &Failure{Message: apiErr.Message, Details: map[string]any{"status": apiErr.Status}}
	if apiErr.RequestID != "" {
		out.Details["requestId"] = apiErr.RequestID
	}
	if len(apiErr.Errors) > 0 {
		out.Details["errors"] = apiErr.Errors
	}
	if len(apiErr.Problems) > 0 {
		out.Details["problems"] = apiErr.Problems
	}
	for k, v := range apiErr.Details {
		out.Details[k] = v
	}
	switch s := apiErr.Status; {
	case s == http.StatusTooManyRequests:
		out.Code, out.Exit = "RATE_LIMITED", ExitLimited
		out.Details["retryAfter"] = int(math.Ceil(apiErr.RetryAfter.Seconds()))
	case s == http.StatusUnauthorized:
		out.Code, out.Exit = "UNAUTHENTICATED", ExitAuth
	case s == http.StatusForbidden:
		out.Code, out.Exit = "FORBIDDEN", ExitAuth
	case s == http.StatusNotFound:
		out.Code, out.Exit = "NOT_FOUND", ExitNotFound
	case s == http.StatusConflict:
		out.Code, out.Exit = "CONFLICT", ExitConflict
	case s == http.StatusUnprocessableEntity && apiErr.Details["choices"] != nil:
		// The server needs a choice (a SCORM package's SCO, a cmi5 AU): details.choices
		// lists them.
		out.Code, out.Exit = "CHOICE_REQUIRED", ExitChoices
	case s == http.StatusBadRequest || s == http.StatusUnprocessableEntity || s == http.StatusRequestEntityTooLarge:
		out.Code, out.Exit = "INVALID", ExitConflict
	case s >= 500:
		out.Code, out.Exit = "SERVER", ExitServer
	default:
		out.Code, out.Exit = "FAILED", ExitFailure
	}
	return out
}
