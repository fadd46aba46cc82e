module github.com/ctxbench/ctxbench/kernels/go

go 1.22
