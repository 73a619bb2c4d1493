"""The vocabulary of a case: states, verdicts, the transitions between states, sanction names,
the attachments of an act (the fields of an auto, art. 68 §1, are `cases.errors.AUTO_FIELDS`,
beside the refusal that names them).

Reads nothing; holds the constants and small value types the register, the workflow, the
deadlines and the sanctions share.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cases.errors import CaseError
from cases.roles import DEFESA, DESCARTAR, ENCERRAR, JULGAR, LAVRAR, NOTIFICAR, RECURSO
from core.texts import N_, Labels

SUGERIDA, LAVRADA, NOTIFICADA = "sugerida", "lavrada", "notificada"
EM_DEFESA, JULGADA, EM_RECURSO = "em defesa", "julgada", "em recurso"
ENCERRADA, DESCARTADA = "encerrada", "descartada"
STATES = (SUGERIDA, LAVRADA, NOTIFICADA, EM_DEFESA, JULGADA, EM_RECURSO, ENCERRADA, DESCARTADA)
VERDICT_STATES = (JULGADA, EM_RECURSO, ENCERRADA)

STATE_LABELS = Labels(
    {
        SUGERIDA: N_("suggested"),
        LAVRADA: N_("notice drawn up"),
        NOTIFICADA: N_("notified"),
        EM_DEFESA: N_("in defence"),
        JULGADA: N_("judged"),
        EM_RECURSO: N_("under appeal"),
        ENCERRADA: N_("closed"),
        DESCARTADA: N_("dismissed"),
    }
)
"""How a case's state is shown (in the chosen language; pt-BR: the law's words). The stored
value is the state itself (`STATES`), whatever the language: translate at display."""


def to_state_label(state: str) -> str:
    """A case state as the pages, reports and command line show it (unknown: as stored)."""
    return STATE_LABELS.get(state, state)


PROCEDENTE, IMPROCEDENTE = "procedente", "improcedente"
PROVIDO, IMPROVIDO = "provido", "improvido"

TRANSITIONS: dict[tuple[str, str], str] = {
    (SUGERIDA, LAVRAR): LAVRADA,
    (SUGERIDA, DESCARTAR): DESCARTADA,
    (LAVRADA, NOTIFICAR): NOTIFICADA,
    (LAVRADA, DESCARTAR): DESCARTADA,
    (NOTIFICADA, DEFESA): EM_DEFESA,
    (NOTIFICADA, JULGAR): JULGADA,
    (EM_DEFESA, JULGAR): JULGADA,
    (JULGADA, RECURSO): EM_RECURSO,
    (JULGADA, ENCERRAR): ENCERRADA,
    (EM_RECURSO, ENCERRAR): ENCERRADA,
}

SANCTIONS = ("advertência", "multa", "afastamento", "recolhimento", "suspensão", "cassação")

SANCTION_LABELS = Labels(
    {
        "advertência": N_("warning (sanction)"),
        "multa": N_("fine"),
        "afastamento": N_("removal of the employee"),
        "recolhimento": N_("withdrawal of the vehicle"),
        "suspensão": N_("suspension"),
        "cassação": N_("revocation"),
    }
)
"""How a sanction is shown (pt-BR: the law's words); a case stores the sanctions themselves,
joined by ", " (`SANCTIONS`)."""


def to_sanctions_label(sanctions: str) -> str:
    """A case's stored sanctions ("multa, suspensão") as shown (unknown ones as stored)."""
    return ", ".join(SANCTION_LABELS.get(s, s) for s in sanctions.split(", "))


@dataclass(frozen=True)
class Attachment:
    name: str
    sha256: str

    @classmethod
    def of_file(cls, path: str | Path) -> Attachment:
        p = Path(path)
        if not p.is_file():
            raise CaseError("attachment not found", where=str(p))
        return cls(p.name, hashlib.sha256(p.read_bytes()).hexdigest())


@dataclass(frozen=True)
class Auto:
    """The fields of an auto de infração (art. 68 §1) a fiscal gives at lavratura."""

    auto_number: str | None
    fact_at: datetime | None
    place_stop_id: str | None = None
    place_lat: float | None = None
    place_lon: float | None = None
    vehicle_plate: str | None = None
    article: str | None = None
