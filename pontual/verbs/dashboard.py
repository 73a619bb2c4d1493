"""`pontual dashboard`: start the planners' dashboard (Streamlit) on the store's snapshot."""

from __future__ import annotations

import argparse

from pontual.context import Context

READY_TIMEOUT_S = 60.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "dashboard",
        help="open the planners' dashboard (reads the published snapshot, never locks the store)",
    )
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on")
    p.add_argument("--headless", action="store_true", help="do not open a browser")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    import signal

    from dashboard.server import start_server, wait_until_ready

    def interrupted(_signum: int, _frame: object) -> None:
        # SIGTERM (a service manager, `kill`) ends the verb like Ctrl+C: Streamlit is stopped
        # too (by default the verb died at once and Streamlit went on serving)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)

    process = start_server(
        ctx.settings.store_path,
        args.port,
        args.address,
        headless=args.headless,
        profile=ctx.settings.profile_id,
    )
    url = f"http://{args.address}:{args.port}"
    try:
        wait_until_ready(url, READY_TIMEOUT_S, process)
        ctx.console.print(f"painel em {url}  (Ctrl+C para encerrar)")
        return int(process.wait())
    except KeyboardInterrupt:
        return 0
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
