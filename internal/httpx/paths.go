package httpx

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// DocumentAs moves the OpenAPI description of an operation registered at a
// ServeMux pattern that OpenAPI cannot spell ("/api/files/{key...}",
// "/api/x/{$}") to the path clients use, and gives it operationID when
// that is not empty (two patterns for one path would otherwise share one).
// It must run right after the operation is registered, before another
// operation whose generated id would clash.
func DocumentAs(api huma.API, method, pattern, path, operationID string) {
	paths := api.OpenAPI().Paths
	from := paths[pattern]
	if from == nil {
		return
	}
	slot := operationSlot(from, method)
	if slot == nil || *slot == nil {
		return
	}
	op := *slot
	*slot = nil
	if from.Get == nil && from.Post == nil && from.Put == nil && from.Patch == nil && from.Delete == nil {
		delete(paths, pattern)
	}
	op.Path = path
	if operationID != "" {
		op.OperationID = operationID
	}
	to := paths[path]
	if to == nil {
		to = &huma.PathItem{}
		paths[path] = to
	}
	if s := operationSlot(to, method); s != nil {
		*s = op
	}
}

func operationSlot(item *huma.PathItem, method string) **huma.Operation {
	switch method {
	case http.MethodGet:
		return &item.Get
	case http.MethodPost:
		return &item.Post
	case http.MethodPut:
		return &item.Put
	case http.MethodPatch:
		return &item.Patch
	case http.MethodDelete:
		return &item.Delete
	}
	return nil
}
