"""Cases: from a suggested infraction to a judged sanction, with who may do what.

- `db`: the transactional case database (SQLite WAL by default, PostgreSQL for a city), migrations
- `roles`: roles, what each may read and do, the operator filter of the query layer
- `accounts`: local accounts (argon2 hashes), authentication; `audit`: the audit log
- `calendar`: business days with national, state and municipal holidays
- `states`: states, verdicts, transitions, sanction names, auto fields, attachments
- `register`: opening a case, reading one case and the list an account may see
- `workflow`: the case state machine (the acts and their checks)
- `deadlines`: due dates of each act, overdue cases; `sanctions`: sanctions, judged repeats,
  the suspension count
- `evidence`: the evidence package of a case and the digests of raw days (`pontual verify`),
  in the store or, for archived days, in the lake
- `digests`: a raw day's digest (SHA-256: `arrow-binary-v1` for new digests, `duckdb-text-v1`
  for those recorded before it), and its reuse while the day's
  fingerprint holds (`raw_day_fingerprints`, ADR 0113; `pontual ingest` writes it for the days
  it touched)
- `archive`: raw days moved from the store into the lake (`archived_days`), their deletion past
  the retention without legal hold (`pontual lake archive|prune`, docs/adr/0099)

Layer: between dashboard and analytics (reads the analytic store, never writes derived tables;
writes `raw_day_digests`, `raw_day_fingerprints` and `archived_days`, and deletes the raw days
it archives).
"""
