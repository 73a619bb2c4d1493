"""Cases: from a suggested infraction to a judged sanction, with who may do what.

- `db`: the transactional case database (SQLite WAL by default, PostgreSQL for a city), migrations
- `roles`: roles, what each may read and do, the operator filter of the query layer
- `accounts`: local accounts (argon2 hashes), authentication; `audit`: the audit log
- `calendar`: business days with national, state and municipal holidays
- `workflow`: the case state machine, deadlines, overdue cases, judged repeats, sanctions
- `evidence`: the evidence package of a case and the digests of raw days (`pontual verify`)

Layer: between dashboard and analytics (reads the analytic store, never writes derived tables).
"""
