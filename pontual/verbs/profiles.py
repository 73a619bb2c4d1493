"""`pontual profiles list|show NAME`: the regulation profiles and the article behind each value."""

from __future__ import annotations

import argparse

from pontual.context import Context
from pontual.messages import gettext


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("profiles", help="list regulation profiles or show one with its sources")
    verbs = p.add_subparsers(dest="profiles_verb", metavar="{list,show}")
    verbs.required = True
    verbs.add_parser("list", help="shipped profiles").set_defaults(func=run_list)
    show = verbs.add_parser("show", help="every value of a profile with its article")
    show.add_argument("name", help="profile id or path to a .toml file")
    show.set_defaults(func=run_show)


def run_list(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from core.profile import list_profiles, load_profile

    table = Table(
        *(
            gettext(h)
            for h in ("id", "name", "effective from", "values", "defaults (to be fixed by decree)")
        )
    )
    for name in list_profiles():
        prof = load_profile(name)
        values = prof.cited_values()
        n_default = sum(1 for _, v in values if v.default)
        table.add_row(
            prof.id, prof.name, prof.effective_from.isoformat(), str(len(values)), str(n_default)
        )
    ctx.console.print(table)
    return 0


def run_show(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from core.profile import load_profile

    prof = load_profile(args.name)
    ctx.console.print(
        f"[bold]{prof.name}[/] "
        + gettext(
            "({id}, version {version}, in force from {start})",
            id=prof.id,
            version=prof.version,
            start=prof.effective_from.isoformat(),
        )
    )
    table = Table(*(gettext(h) for h in ("key", "value", "unit", "source")))
    for key, cited in prof.cited_values():
        table.add_row(key, str(cited.value), cited.unit, cited.citation)
    ctx.console.print(table)
    if prof.infractions.items:
        inf = Table(
            *(
                gettext(h)
                for h in ("group", "item", "description", "penalty", "URM 1st", "URM repeat")
            )
        )
        for item in prof.infractions.items:
            inf.add_row(
                item.group,
                item.item,
                item.description,
                item.penalty,
                "" if item.urm_first is None else f"{item.urm_first:g}",
                "" if item.urm_repeat is None else f"{item.urm_repeat:g}",
            )
        ctx.console.print(inf)
    # imported here: the CLI loads analytics only on the verb that needs it
    from analytics.indices.verdicts import describe_profile_verdicts

    verdicts = describe_profile_verdicts(prof)
    for title in verdicts["verdict_title"].unique(maintain_order=True):
        rows = verdicts.filter(verdicts["verdict_title"] == title)
        crit = Table(
            gettext("criterion"), gettext("article"), gettext("decides alone"), title=title
        )
        for r in rows.iter_rows(named=True):
            crit.add_row(
                r["criterion"], r["article"], gettext("yes") if r["decides"] else gettext("no")
            )
        ctx.console.print(crit)
    return 0
