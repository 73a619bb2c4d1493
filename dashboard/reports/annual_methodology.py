"""The methodology text of the annual dossier: the profile in force, the ICV and annual-score
formulas with their weights and grade bands, the verdict rules and the note on values still
to be fixed by decree (art. 58).

Reads a `Profile`; returns pt-BR paragraphs.
"""

from __future__ import annotations

from analytics.indices.verdicts import verdicts_text
from core.profile import Profile
from core.pt_br import to_plain


def build_methodology_paragraphs(profile: Profile) -> tuple[str, ...]:
    """The methodology section's paragraphs (pt-BR) for the profile in force."""
    icv, q = profile.icv, profile.quality
    bands = q.grade_min_points.value

    n = to_plain
    return (
        f"Perfil regulatório em vigor: {profile.name} ({profile.id}, versão {profile.version}, "
        f"vigente desde {profile.effective_from:%d/%m/%Y}), {profile.law}.",
        f"Nota do ICV = {n(icv.weight_fulfilment.value)} · cumprimento de viagens + "
        f"{n(icv.weight_punctuality.value)} · pontualidade + {n(icv.weight_breakdowns.value)} · "
        "quebras, cada parte pontuada de 0 a 100 em faixas lineares (tabela abaixo). "
        f"Nota anual = {n(q.annual_weight_icv.value)} · ICV + {n(q.annual_weight_iqs.value)} · "
        f"IQS. Conceitos: A a partir de {n(bands['A'])}, B {n(bands['B'])}, C {n(bands['C'])}, "
        f"D {n(bands['D'])}, E abaixo de {n(bands['D'])} pontos.",
        verdicts_text(profile),
        "Valores marcados 'padrão, a ser fixado por decreto' não estão fixados na lei: são "
        "padrões do Pontual até que o decreto previsto no art. 58 os fixe.",
    )
