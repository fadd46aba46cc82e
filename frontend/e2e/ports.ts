// The real stack's ports for the browser tests, in one place. CTXBENCH_E2E_HTTP_PORT and
// CTXBENCH_E2E_GRPC_PORT move them, so two checkouts can run their browser tests on one host.
export const DEFAULT_HTTP_PORT = '18080';
export const HTTP_PORT = process.env.CTXBENCH_E2E_HTTP_PORT ?? DEFAULT_HTTP_PORT;
export const GRPC_PORT = process.env.CTXBENCH_E2E_GRPC_PORT ?? '15051';
export const GRPC_TARGET = `127.0.0.1:${GRPC_PORT}`;
