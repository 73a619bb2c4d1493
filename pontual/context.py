"""What a verb receives: resolved settings, the profile, the console, and the store on demand."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from core.profile import Profile, load_profile
from core.settings import Settings
from core.store import Store

T = TypeVar("T")


@dataclass
class Context:
    settings: Settings
    console: Console = field(default_factory=Console)
    err: Console = field(default_factory=lambda: Console(stderr=True))

    @property
    def profile(self) -> Profile:
        return load_profile(self.settings.profile_id)

    @contextmanager
    def store(self, *, read_only: bool = False) -> Iterator[Store]:
        """Open the store for the duration of a verb (writers publish a snapshot on success)."""
        store = Store.open(self.settings.store_path, read_only=read_only)
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
