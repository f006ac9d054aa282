package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
)

// ErrorBody is the body of every failed response.
type ErrorBody struct {
	status     int
	retryAfter int
	Success    bool                `json:"success"`
	Message    string              `json:"message"`
	Errors     map[string][]string `json:"errors,omitempty"`
	Code       string              `json:"error,omitempty"`
	Details    map[string]any      `json:"details,omitempty"`
}

func (e *ErrorBody) Error() string  { return e.Message }
func (e *ErrorBody) GetStatus() int { return e.status }

// GetHeaders adds Retry-After to rate-limited answers.
func (e *ErrorBody) GetHeaders() http.Header {
	h := http.Header{}
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	return h
}

// statusOf is the one mapping from error kinds to HTTP statuses.
func statusOf(k apperr.Kind) int {
	switch k {
	case apperr.Invalid:
		return http.StatusUnprocessableEntity
	case apperr.BadRequest:
		return http.StatusBadRequest
	case apperr.Unauthorized:
		return http.StatusUnauthorized
	case apperr.Forbidden:
		return http.StatusForbidden
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.Conflict:
		return http.StatusConflict
	case apperr.TooLarge:
		return http.StatusRequestEntityTooLarge
	case apperr.UnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case apperr.RateLimited:
		return http.StatusTooManyRequests
	case apperr.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ErrorFor turns any error into the body and status the caller sees.
// Internal errors are logged with the request id and shown generically.
func ErrorFor(ctx context.Context, err error) *ErrorBody {
	var body *ErrorBody
	if errors.As(err, &body) {
		return body
	}
	e := apperr.As(err)
	if e == nil || e.Kind == apperr.Internal {
		logger(ctx).Error("internal error", "request_id", RequestID(ctx), "error", err)
		return &ErrorBody{status: 500, Message: "Server error. Request id: " + RequestID(ctx)}
	}
	if e.Err != nil {
		logger(ctx).Debug("request failed", "request_id", RequestID(ctx), "error", err)
	}
	return &ErrorBody{status: statusOf(e.Kind), retryAfter: e.RetryAfter, Message: e.Message, Errors: e.Fields, Code: e.Code,
		Details: e.Details}
}

// WriteError writes err as an envelope, for code outside huma handlers.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	body := ErrorFor(r.Context(), err)
	for k, v := range body.GetHeaders() {
		w.Header()[k] = v
	}
	WriteJSON(w, body.status, body)
}

// WriteJSON writes v as JSON with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func logger(ctx context.Context) *slog.Logger {
	if info := infoFrom(ctx); info != nil && info.logger != nil {
		return info.logger
	}
	return slog.Default()
}

// hookHumaErrors makes huma's own errors (malformed JSON, failed schema
// validation, oversized bodies) use the envelope: validation failures
// become 422 with errors keyed by field.
func hookHumaErrors() {
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		body := &ErrorBody{status: status, Message: msg}
		fields := map[string][]string{}
		for _, err := range errs {
			var d *huma.ErrorDetail
			if errors.As(err, &d) && d.Location != "" {
				field, message := fieldError(d.Location, d.Message)
				fields[field] = append(fields[field], message)
			} else if err != nil && body.Message == "" {
				body.Message = err.Error()
			}
		}
		switch {
		case malformedJSON(errs):
			body.status = http.StatusBadRequest
			body.Message = "The request body is not valid JSON."
		case status == http.StatusUnprocessableEntity && len(fields) > 0:
			body.Message = "The given data was invalid."
			body.Errors = fields
		case status == http.StatusBadRequest && len(fields) > 0:
			// A wrong type in a query or path parameter is a validation error.
			body.status = http.StatusUnprocessableEntity
			body.Message = "The given data was invalid."
			body.Errors = fields
		case status == http.StatusRequestEntityTooLarge:
			body.Message = "The request body is too large."
		case status == http.StatusUnsupportedMediaType:
			body.Message = "Unsupported content type."
		case status >= 500:
			body.Message = "Server error."
		}
		if body.Message == "" || strings.HasPrefix(body.Message, "validation failed") {
			body.Message = "The given data was invalid."
		}
		if body.Message != "" {
			body.Message = strings.ToUpper(body.Message[:1]) + body.Message[1:]
		}
		return body
	}
}

// malformedJSON reports huma's complaint about a body that does not parse
// at all, which is a 400, not a field validation failure.
func malformedJSON(errs []error) bool {
	for _, err := range errs {
		var d *huma.ErrorDetail
		if errors.As(err, &d) && d.Location == "body" &&
			(strings.Contains(d.Message, "unexpected end of JSON") || strings.Contains(d.Message, "invalid character")) {
			return true
		}
	}
	return false
}

// fieldError turns huma's location ("body.settings[0].key") and schema
// message into the field name clients use ("settings.0.key") and a sentence
// about that field. A missing property is reported by huma at its parent,
// with the property named in the message.
func fieldError(location, msg string) (field, message string) {
	for _, p := range []string{"body", "query", "path", "header", "form"} {
		if location == p {
			location = ""
		}
		location = strings.TrimPrefix(location, p+".")
	}
	field = strings.NewReplacer("[", ".", "]", "").Replace(location)
	const required = "expected required property "
	if name, ok := strings.CutPrefix(msg, required); ok {
		name = strings.TrimSuffix(name, " to be present")
		if field != "" {
			name = field + "." + name
		}
		return name, fmt.Sprintf("The %s field is required.", name)
	}
	if field == "" {
		field = "body"
	}
	if strings.HasPrefix(msg, "unexpected property") {
		return field, fmt.Sprintf("The %s field is not allowed.", field)
	}
	return field, fmt.Sprintf("The %s field is invalid: %s.", field, msg)
}
