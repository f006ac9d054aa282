// Command clientgen writes the typed API client's operations
// (client/api.gen.go) from the OpenAPI document: the one the routes
// register (server.OpenAPI, the default) or a document file given with
// -in (for instance a server's /api/openapi.json).
//
//	go run ./internal/clientgen -o client/api.gen.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/lms-platform/lms/internal/server"
)

func main() {
	in := flag.String("in", "", "OpenAPI document (JSON); empty: the one the routes register")
	out := flag.String("o", "", "output file; empty: standard output")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "clientgen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	var doc []byte
	var err error
	if in == "" {
		doc, err = server.OpenAPI()
	} else {
		doc, err = os.ReadFile(in)
	}
	if err != nil {
		return err
	}
	src, err := Generate(doc)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(src)
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
