// Command opsgen writes the client operation registry
// (internal/ops/registry.json) from the OpenAPI document the routes
// register.
//
//	go run ./internal/ops/opsgen -o internal/ops/registry.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/lms-platform/lms/internal/ops"
	"github.com/lms-platform/lms/internal/server"
)

func main() {
	out := flag.String("o", "", "output file; empty: standard output")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "opsgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	src, err := server.OpenAPI()
	if err != nil {
		return err
	}
	list, err := ops.Build(src)
	if err != nil {
		return err
	}
	b, err := ops.Encode(list)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
