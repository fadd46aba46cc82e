"""Fleet: enrollment (join tokens, machine credentials), TLS material, revoke and approve."""
