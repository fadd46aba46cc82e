"""A result's way from the stream to its row, in one pass: the messages as the domain sees them
(messages.py), one writer that group-commits every stream's ready batch (writer.py), the pass that stores
a transaction's batches (service.py) through its SQL (repository.py), and the CI of the median filled in
after the ack (ci.py)."""
