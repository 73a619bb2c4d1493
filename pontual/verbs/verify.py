"""`pontual verify`: are the raw pings and taps still what they were when first digested?

Digests the service days not digested yet (unless --no-record), recomputes every recorded day
digest and every case's evidence package digest, and names each day or case that changed
(exit 2). Heavy imports live inside `run` (verbs are imported at start-up).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pontual.context import Context


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="conferir os digests dos dados brutos por dia e das evidências dos casos"
    )
    p.add_argument(
        "--no-record",
        action="store_true",
        help="só conferir (não registrar o digest de dias novos; abre o armazenamento só para leitura)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    import polars as pl
    import sqlalchemy as sa

    from cases.db import CASE_EVIDENCE, CaseDB
    from cases.evidence import evidence_matches, record_day_digests, verify_day_digests
    from core.errors import PontualError
    from core.store import Store

    with Store.open(ctx.settings.store_path, read_only=args.no_record) as store:
        new = None if args.no_record else record_day_digests(store, ctx.profile)
        report = verify_day_digests(store)
    if new is not None and new.height:
        ctx.say(f"digests registrados para {new.height} dia(s)-tabela novos")
    changed = report.filter(~pl.col("is_ok"))
    problems = [
        f"{r['service_date']} ({r['table_name']}: {r['n_rows']} linhas registradas, "
        f"{r['n_rows_now']} agora)"
        for r in changed.iter_rows(named=True)
    ]
    bad_cases: list[int] = []
    with CaseDB.open(ctx.settings.cases_db_url) as db, db.read() as conn:
        for case_id, package, digest in conn.execute(
            sa.select(CASE_EVIDENCE.c.case_id, CASE_EVIDENCE.c.package, CASE_EVIDENCE.c.sha256)
        ):
            if not evidence_matches(package, digest):
                bad_cases.append(int(case_id))
    ctx.say(f"{report.height - changed.height} de {report.height} dia(s)-tabela conferem")
    if problems or bad_cases:
        parts = []
        if problems:
            parts.append("dados brutos alterados em " + "; ".join(problems))
        if bad_cases:
            parts.append(
                "pacote de evidências alterado nos casos " + ", ".join(map(str, bad_cases))
            )
        raise PontualError(
            " — ".join(parts),
            hint="restaure o dia a partir do backup; o digest registrado é a referência (art. 77)",
        )
    ctx.say("nenhuma alteração")
    return 0
