// Package httpx is the HTTP foundation of the API: the response envelope,
// the one mapping from errors to statuses, route registration with OpenAPI
// descriptions, and the middleware every request passes through.
package httpx

// Envelope is the body of every API response.
type Envelope[T any] struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    T      `json:"data"`
}

// Meta describes one page of a list.
type Meta struct {
	CurrentPage int   `json:"current_page"`
	PerPage     int   `json:"per_page"`
	Total       int64 `json:"total"`
	LastPage    int   `json:"last_page"`
}

// PageEnvelope is the body of a paginated list.
type PageEnvelope[T any] struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    []T    `json:"data"`
	Meta    Meta   `json:"meta"`
}

// Response is the output of a handler answering one value.
type Response[T any] struct {
	// Status overrides the route's success status when non-zero.
	Status int
	Body   Envelope[T]
}

// defaultStatus fills in the route's success status; huma would otherwise
// write the zero Status field as is.
func (r *Response[T]) defaultStatus(status int) {
	if r.Status == 0 {
		r.Status = status
	}
}

// PageResponse is the output of a handler answering one page of a list.
type PageResponse[T any] struct {
	Body PageEnvelope[T]
}

// OK wraps data in a successful envelope.
func OK[T any](data T) (*Response[T], error) {
	return &Response[T]{Body: Envelope[T]{Success: true, Data: data}}, nil
}

// OKMessage wraps data with a message.
func OKMessage[T any](data T, message string) (*Response[T], error) {
	return &Response[T]{Body: Envelope[T]{Success: true, Message: message, Data: data}}, nil
}

// Created answers 201 with data.
func Created[T any](data T, message string) (*Response[T], error) {
	return &Response[T]{Status: 201, Body: Envelope[T]{Success: true, Message: message, Data: data}}, nil
}

// Empty is the data of responses that carry none.
type Empty struct{}

// Done answers success with only a message.
func Done(message string) (*Response[*Empty], error) {
	return &Response[*Empty]{Body: Envelope[*Empty]{Success: true, Message: message}}, nil
}

// PageQuery is embedded in list inputs.
type PageQuery struct {
	Page    int `query:"page" minimum:"1" default:"1" doc:"Page number, from 1."`
	PerPage int `query:"per_page" minimum:"1" maximum:"100" default:"15" doc:"Items per page, at most 100."`
}

// Offset is the number of items before the page.
func (p PageQuery) Offset() int { return (p.Page - 1) * p.PerPage }

// Paged wraps one page of items.
func Paged[T any](items []T, q PageQuery, total int64) (*PageResponse[T], error) {
	if items == nil {
		items = []T{}
	}
	last := int((total + int64(q.PerPage) - 1) / int64(q.PerPage))
	if last < 1 {
		last = 1
	}
	return &PageResponse[T]{Body: PageEnvelope[T]{Success: true, Data: items,
		Meta: Meta{CurrentPage: q.Page, PerPage: q.PerPage, Total: total, LastPage: last}}}, nil
}
