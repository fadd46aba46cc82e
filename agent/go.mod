module github.com/ctxbench/ctxbench/agent

go 1.26.0

require (
	github.com/ctxbench/ctxbench/kernels/contract/go v0.0.0
	github.com/google/uuid v1.6.0
	golang.org/x/sys v0.48.0
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
)

// The kernel contract's Go code (kernels/contract/go: --list structs, parameter grammar) is shared with
// the Go kernels and lives in this repository; it is never fetched from a proxy.
replace github.com/ctxbench/ctxbench/kernels/contract/go => ../kernels/contract/go
