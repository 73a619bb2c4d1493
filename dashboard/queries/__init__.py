"""What the dashboard and the reports read from the store, as Polars frames: one module per
page (`overview`, `lines`, `trip`, `crowding`, `fleet`, `infractions`, `annual`, `live`), the
sidebar's `filters`, what only the `reports` read, and the `snapshot` helpers they share.

Pure functions over an open read-only `Store` (the published snapshot,
`core.store.open_snapshot`): the dashboard never opens the store file itself, so it never
takes the writer's lock. No streamlit here; the pages cache these results keyed on the
snapshot's modification time (`dashboard.state.load`). Each module's docstring names the
tables it reads and the frames it returns.
"""
