"""HTTP helpers below the routers: the request body budget and the error responses a route documents."""
