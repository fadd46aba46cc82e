"""Dispatch: which agents are connected (the hub), what a run's StartRun carries, and when a run starts,
stops or is sent again. Plain domain objects only: agents/ turns them into protobuf on the wire."""
