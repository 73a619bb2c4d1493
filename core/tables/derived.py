"""Derived tables, written by the analytics jobs. Each row carries `pontual_version` and
`profile_id` (added by `Table(derived=True)`)."""
