"""Stage 8, batch: jobs over many sources (read → convert → verify → report): `migrate`,
`sweep`, `compare`, the coverage table, and the sources they read.

May depend on every earlier stage.
"""
