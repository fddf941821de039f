//go:build kubebuilder_anchor

// cmd/main.go is not a binary of this project. The kubebuilder CLI refuses to
// run `kubebuilder create api` unless this file exists, so it stays, excluded
// from every build by its build constraint.
//
// The project ships two binaries, each with its own entry point:
// cmd/address-controller (the core) and cmd/metallb-iad (the MetalLB driver).
// A controller scaffolded by the CLI lands in internal/controller/<group>;
// move it into the room of the binary that should run it (internal/core or
// internal/driver/...) and register it in that package's Setup. See
// docs/development.md.
package main
