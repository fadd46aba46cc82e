module github.com/ctxbench/ctxbench/kernels/go

go 1.22

require github.com/ctxbench/ctxbench/kernels/contract/go v0.0.0

// The kernel contract's Go code lives beside the contract (kernels/contract/go) and is shared with
// the agent; it is never fetched from a proxy.
replace github.com/ctxbench/ctxbench/kernels/contract/go => ../contract/go
