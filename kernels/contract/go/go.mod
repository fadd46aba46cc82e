module github.com/ctxbench/ctxbench/kernels/contract/go

go 1.22
