// Package apperr is the one error type of the platform: a kind that decides
// the HTTP status, and a message that is safe to show to the caller.
package apperr

import (
	"errors"
	"fmt"
)

// Kind classifies an error; httpx maps each kind to one HTTP status.
type Kind int

const (
	Internal Kind = iota
	Invalid
	Unauthorized
	Forbidden
	NotFound
	Conflict
	TooLarge
	RateLimited
	Unavailable
	BadRequest
	UnsupportedMedia
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case Unauthorized:
		return "unauthorized"
	case Forbidden:
		return "forbidden"
	case NotFound:
		return "not_found"
	case Conflict:
		return "conflict"
	case TooLarge:
		return "too_large"
	case RateLimited:
		return "rate_limited"
	case Unavailable:
		return "unavailable"
	case BadRequest:
		return "bad_request"
	case UnsupportedMedia:
		return "unsupported_media_type"
	}
	return "internal"
}

// Error is an error with a kind. Message is shown to the caller; Err, the
// cause, only reaches the log.
type Error struct {
	Kind    Kind
	Message string
	// Fields holds validation messages keyed by input field (422 responses).
	Fields map[string][]string
	// RetryAfter is the number of seconds a rate-limited caller should wait.
	RetryAfter int
	// Code is a stable machine-readable code where the interface names one
	// (for example "rate_limited"); empty otherwise.
	Code string
	// Details are machine-readable facts about the failure, shown as the
	// envelope's details (the choices a caller must pick from: a package's SCOs or AUs).
	Details map[string]any
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Kind, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error of the kind with a message safe to show.
func New(kind Kind, message string) *Error {
	return &Error{Kind: kind, Message: message}
}

// Wrap keeps err as the cause (for the log) behind a safe message.
func Wrap(kind Kind, err error, message string) *Error {
	return &Error{Kind: kind, Message: message, Err: err}
}

// Validation is a 422 with messages keyed by field.
func Validation(fields map[string][]string) *Error {
	return &Error{Kind: Invalid, Message: "The given data was invalid.", Fields: fields}
}

// Field is a 422 for one field with one message; the message is also the
// error's own message, as callers show it in the envelope.
func Field(field, message string) *Error {
	return &Error{Kind: Invalid, Message: message, Fields: map[string][]string{field: {message}}}
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// KindOf returns the kind of err; errors without one are Internal.
func KindOf(err error) Kind {
	if e := As(err); e != nil {
		return e.Kind
	}
	return Internal
}

// Is reports whether err carries the kind.
func Is(err error, kind Kind) bool { return err != nil && KindOf(err) == kind }

// Problems collects validation messages keyed by field, so that an input
// with several independent problems answers one 422 naming all of them
// instead of only the first one found.
type Problems map[string][]string

// Add records a message for the field.
func (p Problems) Add(field, message string) { p[field] = append(p[field], message) }

// Join records the field messages of err when it is a validation error
// (a 422 with fields) and reports whether it was one; nil joins nothing
// and reports true. Any other error is the caller's to return.
func (p Problems) Join(err error) bool {
	if err == nil {
		return true
	}
	e := As(err)
	if e == nil || e.Kind != Invalid || len(e.Fields) == 0 {
		return false
	}
	for field, msgs := range e.Fields {
		p[field] = append(p[field], msgs...)
	}
	return true
}

// Err is the 422 naming every problem, or nil when there is none. A
// single message is also the error's message, as with Field.
func (p Problems) Err() error {
	var only []string
	for _, msgs := range p {
		only = append(only, msgs...)
	}
	switch len(only) {
	case 0:
		return nil
	case 1:
		for field := range p {
			return Field(field, only[0])
		}
	}
	return Validation(p)
}
