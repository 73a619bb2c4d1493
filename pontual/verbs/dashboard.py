"""`pontual dashboard`: start the planners' dashboard (Streamlit) on the store's snapshot, or,
with `--public`, the public transparency page (published aggregates only, no login).

With the global `--lake PATH` both read the lake instead (DuckDB views over its partitions,
`core.lake.open_lake`): the path travels to the app in PONTUAL_LAKE."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.texts import N_
from pontual.context import Context
from pontual.messages import gettext

READY_TIMEOUT_S = 60.0
MODE_LABELS = {
    "local": N_("local accounts"),
    "oidc": "OpenID Connect",
    "none": N_("no login, this machine only"),
}
"""How each authentication mode is named on the start line (catalogue ids)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dashboard",
        help="open the planners' dashboard (reads the published snapshot, never locks the store)",
    )
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on")
    p.add_argument(
        "--open-browser",
        action="store_true",
        help="open the dashboard in this machine's browser once it answers (default: only "
        "print its address; Streamlit itself always runs headless, so it never stops at its "
        "first-run e-mail prompt)",
    )
    p.add_argument("--headless", action="store_true", help="the default; kept for older scripts")
    p.add_argument(
        "--public",
        action="store_true",
        help="serve the public transparency page instead (published aggregates, no login)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    import signal

    from core.settings import LAKE_ENV
    from dashboard.auth import AUTH_ENV, check_exposure, resolve_auth_mode
    from dashboard.server import start_server, wait_until_ready

    def interrupted(_signum: int, _frame: object) -> None:
        # SIGTERM (a service manager, `kill`) ends the verb like Ctrl+C: Streamlit is stopped
        # too (by default the verb died at once and Streamlit went on serving)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)

    env: dict[str, str] = {}
    if ctx.settings.lake_path is not None:
        env[LAKE_ENV] = str(_existing_lake(ctx.settings.lake_path))
    if not args.public:
        # Refused before anything starts: an unauthenticated dashboard on the network.
        mode = resolve_auth_mode(ctx.settings)
        check_exposure(args.address, mode)
        env[AUTH_ENV] = mode
    process = start_server(
        ctx.settings.store_path,
        args.port,
        args.address,
        headless=True,
        profile=ctx.settings.profile_id,
        public=args.public,
        env=env,
    )
    url = f"http://{args.address}:{args.port}"
    try:
        wait_until_ready(url, READY_TIMEOUT_S, process)
        if args.open_browser:
            import webbrowser

            webbrowser.open(url)
        if args.public:
            ctx.console.print(gettext("public page at {url}  (Ctrl+C to stop)", url=url))
        else:
            ctx.console.print(gettext("dashboard at {url}  (Ctrl+C to stop)", url=url))
            ctx.console.print(gettext("login: {mode}", mode=gettext(MODE_LABELS[env[AUTH_ENV]])))
        return int(process.wait())
    except KeyboardInterrupt:
        return 0
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


def _existing_lake(path: Path) -> Path:
    """The lake's absolute path; a user error when it is not a folder."""
    from core.errors import ConfigError

    if not path.is_dir():
        raise ConfigError(
            "lake not found",
            where=str(path),
            hint="write one with `pontual export parquet --lake PATH`",
        )
    return path.resolve()
