"""The methodology text of the annual dossier: the profile in force, the ICV and annual-score
formulas with their weights and grade bands, the verdict rules and the note on values still
to be fixed by decree (art. 58).

Reads a `Profile`; returns its paragraphs (pt-BR by default, `core.texts`).
"""

from __future__ import annotations

from analytics.indices.verdicts import verdicts_text
from core.profile import Profile
from core.pt_br import to_plain
from core.texts import gettext as _


def build_methodology_paragraphs(profile: Profile) -> tuple[str, ...]:
    """The methodology section's paragraphs (pt-BR) for the profile in force."""
    icv, q = profile.icv, profile.quality
    bands = q.grade_min_points.value

    n = to_plain
    return (
        _(
            "Regulation profile in force: {name} ({id}, version {version}, in force "
            "since {since}), {law}.",
            name=profile.name,
            id=profile.id,
            version=profile.version,
            since=f"{profile.effective_from:%d/%m/%Y}",
            law=profile.law,
        ),
        _(
            "ICV score = {w_f} · trip fulfilment + {w_p} · punctuality + {w_b} · "
            "breakdowns, each part scored from 0 to 100 in linear bands (table "
            "below). Annual score = {w_icv} · ICV + {w_iqs} · IQS. Grades: A from "
            "{a}, B {b}, C {c}, D {d}, E below {d} points.",
            w_f=n(icv.weight_fulfilment.value),
            w_p=n(icv.weight_punctuality.value),
            w_b=n(icv.weight_breakdowns.value),
            w_icv=n(q.annual_weight_icv.value),
            w_iqs=n(q.annual_weight_iqs.value),
            a=n(bands["A"]),
            b=n(bands["B"]),
            c=n(bands["C"]),
            d=n(bands["D"]),
        ),
        verdicts_text(profile),
        _(
            "Values marked 'default, to be set by decree' are not fixed in the law: "
            "they are Pontual's defaults until the decree foreseen in art. 58 fixes "
            "them."
        ),
    )
