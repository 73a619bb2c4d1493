"""What a verb receives: resolved settings, the profile, the console, and the store on demand.

Imported by every verb at start-up, so it imports nothing heavy at module level: rich, the
profile loader (pydantic) and the store (DuckDB, Polars) are imported when first used (see
`pontual.verbs` on the lazy start-up).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from core.settings import Settings
from pontual.messages import gettext

if TYPE_CHECKING:
    from rich.console import Console

    from core.profile import Profile
    from core.store import Store

T = TypeVar("T")


class Context:
    """Settings plus the consoles (stdout, stderr), the profile and the store, made on demand."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def console(self) -> Console:
        from rich.console import Console

        return Console()

    @cached_property
    def err(self) -> Console:
        from rich.console import Console

        return Console(stderr=True)

    @property
    def profile(self) -> Profile:
        from core.profile import load_profile

        return load_profile(self.settings.profile_id)

    @contextmanager
    def store(self, *, read_only: bool = False) -> Iterator[Store]:
        """Open the store for the duration of a verb (writers publish a snapshot on success).

        A reader (`read_only`) finding the store held by a writer (`pontual listen`/`serve`
        run for hours) reads the published snapshot instead, and says so on stderr. With a
        lake (global --lake) readers get the read-only store over it (`open_lake`); a verb that
        writes the store is refused (the lake is written by `export parquet` and
        `match --engine spark`)."""
        from core.errors import ConfigError, StoreError
        from core.store import Store, open_snapshot, snapshot_path

        if self.settings.lake_path is not None:
            from core.lake import open_lake

            if not read_only:
                raise ConfigError(
                    "this command writes the store; with --lake the lake is only read",
                    where=f"--lake {self.settings.lake_path}",
                    hint="run it without --lake (on the file) and export with `pontual export "
                    "parquet`, or use `pontual match --engine spark` to write the lake",
                )
            lake = open_lake(self.settings.lake_path)
            try:
                yield lake
            finally:
                lake.close()
            return
        path = self.settings.store_path
        try:
            store = Store.open(path, read_only=read_only)
        except StoreError as exc:
            held = "another process" in exc.what
            if not (read_only and held and snapshot_path(path).exists()):
                raise
            self.err.print(
                gettext(
                    "{path} is open for writing by another process; reading the published "
                    "snapshot ({snapshot})",
                    path=path,
                    snapshot=snapshot_path(path),
                )
            )
            store = open_snapshot(path)
        try:
            yield store
            if not read_only:
                store.publish_snapshot()
        finally:
            store.close()

    @property
    def show_progress(self) -> bool:
        return not self.settings.quiet and sys.stderr.isatty()

    def progress(
        self, items: Iterable[T], description: str, total: int | None = None
    ) -> Iterator[T]:
        """Iterate with a rich progress bar (only on a TTY and without --quiet)."""
        if not self.show_progress:
            yield from items
            return
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=self.err,
            transient=True,
        ) as bar:
            task = bar.add_task(description, total=total)
            for item in items:
                yield item
                bar.advance(task)

    def say(self, message: str) -> None:
        """A line of output, unless --quiet."""
        if not self.settings.quiet:
            self.console.print(message)
