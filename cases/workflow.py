"""The infraction case: from a suggestion to a judged sanction (BG art. 63-73).

States (`STATES`) and the acts that move a case between them (`TRANSITIONS`)::

    sugerida --lavrar--> lavrada --notificar--> notificada --defesa--> em defesa --julgar--> julgada
    notificada --julgar (defence window closed)--> julgada
    julgada --recurso (procedente only)--> em recurso --encerrar--> encerrada
    julgada --encerrar--> encerrada
    sugerida | lavrada --descartar--> descartada

Each act is done by an account whose role may do it (`cases.roles`), on a legal date (`on`),
with a reason and attachments, and is recorded as a `case_events` row and an audit row in the
same transaction. Deadlines come from the profile's [procedure] and `cases.calendar`:
the auto is sent within 15 days (art. 68 §2); the defence within 15 business days of ciência,
with suspensive effect (art. 69): no judgment while the window is open unless a defence was
filed; 90 days for diligences (69-I); an appeal within 15 business days of the judgment, without
suspensive effect (69-III). Repeats (art. 65) and the suspension count (72-I) use only cases
judged procedente and not reversed on appeal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from analytics.indices.infractions import repeat_window_start
from cases.audit import record_audit
from cases.calendar import BusinessCalendar, procedure_of
from cases.db import CASE_EVENTS, CASE_EVIDENCE, CASES, CaseDB, now_utc
from cases.errors import CaseError
from cases.roles import (
    DEFESA,
    DESCARTAR,
    ENCERRAR,
    HOLD,
    JULGAR,
    LAVRAR,
    NOTIFICAR,
    READ_CASES,
    READ_VERDICTS,
    RECURSO,
    Account,
    authorize,
    may,
    operator_scope,
)
from core.profile import Infraction, Profile

SUGERIDA, LAVRADA, NOTIFICADA = "sugerida", "lavrada", "notificada"
EM_DEFESA, JULGADA, EM_RECURSO = "em defesa", "julgada", "em recurso"
ENCERRADA, DESCARTADA = "encerrada", "descartada"
STATES = (SUGERIDA, LAVRADA, NOTIFICADA, EM_DEFESA, JULGADA, EM_RECURSO, ENCERRADA, DESCARTADA)
VERDICT_STATES = (JULGADA, EM_RECURSO, ENCERRADA)

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

# art. 68 §1 fields of the auto, by the name the CLI option gives them
AUTO_FIELDS = {
    "auto_number": "--auto (número do auto)",
    "operator_id": "empresa (I)",
    "vehicle_plate": "--plate (prefixo ou placa, II)",
    "place": "--stop ou --lat/--lon (local, III)",
    "fact_at": "--at (data e hora, III)",
    "article": "--article (dispositivo legal violado, IV)",
    "lavrada_by": "--by (autoridade que assina, V)",
}


@dataclass(frozen=True)
class Attachment:
    name: str
    sha256: str

    @classmethod
    def of_file(cls, path: str | Path) -> Attachment:
        p = Path(path)
        if not p.is_file():
            raise CaseError("anexo não encontrado", where=str(p))
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


# -- reading -----------------------------------------------------------------------------------
def _case_row(conn: Connection, case_id: int, *, lock: bool = False) -> Any:
    query = sa.select(CASES).where(CASES.c.case_id == case_id)
    if lock:
        query = query.with_for_update()  # PostgreSQL row lock; SQLite already holds the db lock
    row = conn.execute(query).first()
    if row is None:
        raise CaseError(f"caso {case_id} não existe", hint="veja `pontual cases list`")
    return row


def get_case(db: CaseDB, account: Account, case_id: int) -> dict[str, Any]:
    """One case as a dict of its columns, plus `events` (list of dicts, oldest first)."""
    with db.read() as conn:
        row = _case_row(conn, case_id)
        _authorize_read(account, row)
        events = conn.execute(
            sa.select(CASE_EVENTS)
            .where(CASE_EVENTS.c.case_id == case_id)
            .order_by(CASE_EVENTS.c.event_id)
        ).all()
        evidence = conn.execute(
            sa.select(CASE_EVIDENCE.c.sha256).where(CASE_EVIDENCE.c.case_id == case_id)
        ).scalar()
    out = _utc(dict(row._mapping))
    out["events"] = [_utc(dict(e._mapping)) for e in events]
    out["evidence_sha256"] = evidence
    return out


def read_evidence(db: CaseDB, account: Account, case_id: int) -> tuple[str, str]:
    """(package JSON, SHA-256 recorded at lavratura) of a case."""
    with db.read() as conn:
        row = _case_row(conn, case_id)
        _authorize_read(account, row)
        got = conn.execute(
            sa.select(CASE_EVIDENCE.c.package, CASE_EVIDENCE.c.sha256).where(
                CASE_EVIDENCE.c.case_id == case_id
            )
        ).first()
    if got is None:
        raise CaseError(f"o caso {case_id} não tem pacote de evidências (ainda não lavrado)")
    return str(got.package), str(got.sha256)


def _utc(row: dict[str, Any]) -> dict[str, Any]:
    """Instants as aware UTC datetimes (SQLite gives them back naive; they are stored in UTC)."""
    return {
        k: v.replace(tzinfo=UTC) if isinstance(v, datetime) and v.tzinfo is None else v
        for k, v in row.items()
    }


def _authorize_read(account: Account, row: Any) -> None:
    if may(account, READ_CASES, operator_id=row.operator_id):
        return
    if row.state in VERDICT_STATES:
        authorize(account, READ_VERDICTS, operator_id=row.operator_id)
        return
    authorize(account, READ_CASES, operator_id=row.operator_id)


CASE_LIST_SCHEMA = {
    "case_id": pl.Int64,
    "state": pl.String,
    "operator_id": pl.String,
    "group": pl.String,
    "item": pl.String,
    "occurred_on": pl.Date,
    "vehicle_id": pl.String,
    "auto_number": pl.String,
    "verdict": pl.String,
    "sanctions": pl.String,
    "sanction_authority": pl.String,
    "urm": pl.Float64,
    "is_repeat": pl.Boolean,
    "is_legal_hold": pl.Boolean,
    "infraction_key": pl.String,
}


def list_cases(db: CaseDB, account: Account, *, state: str | None = None) -> pl.DataFrame:
    """The cases `account` may read: an operadora its operator's, conselho judged ones only.

    Columns: `CASE_LIST_SCHEMA` (sanctions by name, comma-separated; urm applied, doubled on a
    judged repeat; sanction_authority the competent authority of art. 64)."""
    query = sa.select(*(CASES.c[c] for c in CASE_LIST_SCHEMA)).order_by(CASES.c.case_id)
    if may(account, READ_CASES):
        scope = operator_scope(account)
        if scope is not None:
            query = query.where(CASES.c.operator_id == scope)
    else:
        authorize(account, READ_VERDICTS)
        query = query.where(CASES.c.state.in_(VERDICT_STATES))
    if state is not None:
        if state not in STATES:
            raise CaseError(f"estado desconhecido {state!r}", hint="estados: " + ", ".join(STATES))
        query = query.where(CASES.c.state == state)
    with db.read() as conn:
        rows = conn.execute(query).all()
    return pl.DataFrame([tuple(r) for r in rows], schema=CASE_LIST_SCHEMA, orient="row")


# -- opening -----------------------------------------------------------------------------------
def open_case(db: CaseDB, suggestion: Mapping[str, Any], by: Account) -> int:
    """A case in state `sugerida` for a row of `suggested_infractions` (its id; the existing
    case's id when the suggestion already has one). Opened by whoever may lavrar or discard it."""
    if not may(by, DESCARTAR, operator_id=suggestion["operator_id"]):
        authorize(by, LAVRAR, operator_id=suggestion["operator_id"])
    key = suggestion["infraction_key"]
    try:
        return _insert_case(db, suggestion, key, by)
    except sa.exc.IntegrityError:  # opened by someone else at the same moment
        with db.read() as conn:
            got = conn.execute(
                sa.select(CASES.c.case_id).where(CASES.c.infraction_key == key)
            ).scalar()
        if got is None:
            raise
        return int(got)


def _insert_case(db: CaseDB, suggestion: Mapping[str, Any], key: str, by: Account) -> int:
    with db.begin() as conn:
        got = conn.execute(sa.select(CASES.c.case_id).where(CASES.c.infraction_key == key)).scalar()
        if got is not None:
            return int(got)
        now = now_utc()
        result = conn.execute(
            CASES.insert().values(
                infraction_key=key,
                state=SUGERIDA,
                row_version=1,
                operator_id=suggestion["operator_id"],
                group=suggestion["group"],
                item=suggestion["item"],
                description=suggestion["description"],
                article=suggestion.get("source") or "",
                route_id=suggestion.get("route_id"),
                vehicle_id=suggestion.get("vehicle_id"),
                occurred_on=suggestion["occurred_on"],
                fact=suggestion["fact"],
                suggested_urm=suggestion.get("urm"),
                is_legal_hold=False,
                created_at=now,
                updated_at=now,
            )
        )
        pk = result.inserted_primary_key
        assert pk is not None
        case_id = int(pk[0])
        record_audit(conn, by.name, "case_opened", f"caso {case_id}", key)
    return case_id


# -- the transitions -----------------------------------------------------------------------------
class Workflow:
    """Acts on cases under one profile (deadlines, calendar, catalogue, sanctions)."""

    def __init__(self, db: CaseDB, profile: Profile) -> None:
        self.db = db
        self.profile = profile
        self.proc = procedure_of(profile)
        self.calendar = BusinessCalendar.from_profile(profile)

    # deadlines ---------------------------------------------------------------------------------
    def auto_due(self, lavrada_on: date) -> date:
        return lavrada_on + timedelta(days=self.proc.auto_send_days.value)

    def defence_due(self, notified_on: date) -> date:
        return self.calendar.add_business_days(notified_on, self.proc.defence_business_days.value)

    def judgment_due(self, defence_on: date) -> date:
        return defence_on + timedelta(days=self.proc.diligence_days.value)

    def appeal_due(self, judged_on: date) -> date:
        return self.calendar.add_business_days(judged_on, self.proc.appeal_business_days.value)

    def deadlines(self, case: Mapping[str, Any]) -> dict[str, date]:
        """Due dates that apply to a case so far: auto, defesa, julgamento, recurso."""
        out: dict[str, date] = {}
        if case.get("lavrada_on"):
            out["remessa do auto (art. 68 §2)"] = self.auto_due(case["lavrada_on"])
        if case.get("notified_on"):
            out["defesa (art. 69)"] = self.defence_due(case["notified_on"])
        if case.get("defence_on"):
            out["diligências e julgamento (art. 69-I)"] = self.judgment_due(case["defence_on"])
        if case.get("judged_on") and case.get("verdict") == PROCEDENTE:
            out["recurso (art. 69-III)"] = self.appeal_due(case["judged_on"])
        return out

    # the core of every act -----------------------------------------------------------------------
    def _act(
        self,
        case_id: int,
        action: str,
        by: Account,
        on: date,
        reason: str,
        attachments: Sequence[Attachment],
        check: Any,
        evidence: tuple[str, str] | None = None,
    ) -> str:
        if not reason or not reason.strip():
            raise CaseError("diga por quê (--reason)", hint="todo ato do caso registra o motivo")
        today = datetime.now(ZoneInfo(self.profile.general.timezone.value)).date()
        if on > today:
            raise CaseError(
                f"data do ato {on} no futuro (hoje é {today})",
                hint="registre o ato na data em que foi praticado",
            )
        with self.db.begin() as conn:
            row = _case_row(conn, case_id, lock=True)
            authorize(by, action, operator_id=row.operator_id)
            target = TRANSITIONS.get((row.state, action))
            if target is None:
                allowed = [a for (s, a) in TRANSITIONS if s == row.state]
                raise CaseError(
                    f"o caso {case_id} está '{row.state}': '{action}' não é permitido",
                    hint=(
                        "atos possíveis agora: " + ", ".join(allowed)
                        if allowed
                        else "o caso está encerrado"
                    ),
                )
            last = conn.execute(
                sa.select(sa.func.max(CASE_EVENTS.c.on_date)).where(
                    CASE_EVENTS.c.case_id == case_id
                )
            ).scalar()
            if last is not None and on < last:
                raise CaseError(
                    f"data do ato {on} anterior ao último ato do caso ({last})",
                    hint="os atos de um caso seguem a ordem do tempo",
                )
            updates: dict[str, Any] = check(row, conn) or {}
            updates.update(state=target, row_version=row.row_version + 1, updated_at=now_utc())
            done = conn.execute(
                CASES.update()
                .where(CASES.c.case_id == case_id, CASES.c.row_version == row.row_version)
                .values(**updates)
            )
            if done.rowcount != 1:
                raise CaseError(
                    f"o caso {case_id} foi alterado por outra pessoa ao mesmo tempo",
                    hint="consulte o caso e repita o ato",
                )
            conn.execute(
                CASE_EVENTS.insert().values(
                    case_id=case_id,
                    from_state=row.state,
                    to_state=target,
                    actor=by.name,
                    role=by.role,
                    at=now_utc(),
                    on_date=on,
                    reason=reason,
                    attachments=json.dumps([a.__dict__ for a in attachments], ensure_ascii=False),
                )
            )
            record_audit(
                conn,
                by.name,
                "case_transition",
                f"caso {case_id}",
                f"{row.state} -> {target} em {on}: {reason}",
            )
            if evidence is not None:
                package, digest = evidence
                conn.execute(
                    CASE_EVIDENCE.insert().values(
                        case_id=case_id, sha256=digest, package=package, created_at=now_utc()
                    )
                )
                record_audit(conn, by.name, "evidence_recorded", f"caso {case_id}", digest)
        return target

    # the acts ------------------------------------------------------------------------------------
    def lavrar(
        self,
        case_id: int,
        by: Account,
        auto: Auto,
        *,
        on: date,
        reason: str = "auto de infração lavrado",
        attachments: Sequence[Attachment] = (),
        evidence: tuple[str, str] | None = None,
    ) -> str:
        """Sign the auto: every art. 68 §1 field is required; `evidence` is the package built
        from the store (`cases.evidence.build_evidence_package`: canonical JSON, SHA-256)."""

        def check(row: Any, conn: Connection) -> dict[str, Any]:
            article = auto.article or row.article
            missing = []
            if not (auto.auto_number and auto.auto_number.strip()):
                missing.append("auto_number")
            if not row.operator_id:
                missing.append("operator_id")
            if row.vehicle_id and not auto.vehicle_plate:
                missing.append("vehicle_plate")
            has_coords = auto.place_lat is not None and auto.place_lon is not None
            if not auto.place_stop_id and not has_coords:
                missing.append("place")
            if auto.fact_at is None:
                missing.append("fact_at")
            if not article:
                missing.append("article")
            if auto.fact_at is not None and auto.fact_at.tzinfo is None:
                raise CaseError(
                    "data e hora do fato sem fuso horário", where=f"caso {case_id}, campo fact_at"
                )
            if missing:
                raise CaseError(
                    "faltam campos obrigatórios do auto de infração (art. 68 §1): "
                    + "; ".join(AUTO_FIELDS[m] for m in missing),
                    where=f"caso {case_id}",
                )
            if has_coords and not (
                -90 <= (auto.place_lat or 0) <= 90 and -180 <= (auto.place_lon or 0) <= 180
            ):
                raise CaseError("coordenadas fora do intervalo WGS 84", where=f"caso {case_id}")
            return {
                "auto_number": auto.auto_number,
                "place_stop_id": auto.place_stop_id,
                "place_lat": auto.place_lat,
                "place_lon": auto.place_lon,
                "vehicle_plate": auto.vehicle_plate,
                "fact_at": auto.fact_at.astimezone(UTC) if auto.fact_at else None,
                "article": article,
                "lavrada_by": by.name,
                "lavrada_on": on,
            }

        try:
            return self._act(case_id, LAVRAR, by, on, reason, attachments, check, evidence)
        except sa.exc.IntegrityError as exc:
            raise CaseError(
                f"o número de auto {auto.auto_number!r} já foi usado em outro caso",
                where=f"caso {case_id}",
            ) from exc

    def notificar(
        self,
        case_id: int,
        by: Account,
        *,
        on: date,
        reason: str = "auto remetido à operadora",
        attachments: Sequence[Attachment] = (),
    ) -> str:
        """The auto reached the operator (its ciência): refused after the 15 days of art. 68 §2."""

        def check(row: Any, conn: Connection) -> dict[str, Any]:
            due = self.auto_due(row.lavrada_on)
            if on > due:
                raise CaseError(
                    f"prazo de remessa do auto vencido em {due} (art. 68 §2: "
                    f"{self.proc.auto_send_days.value} dias da lavratura em {row.lavrada_on})",
                    where=f"caso {case_id}",
                    hint="o auto remetido fora do prazo não vale: descarte o caso com o motivo",
                )
            return {"notified_on": on}

        return self._act(case_id, NOTIFICAR, by, on, reason, attachments, check)

    def defesa(
        self,
        case_id: int,
        by: Account,
        *,
        on: date,
        reason: str,
        attachments: Sequence[Attachment] = (),
    ) -> str:
        """The operator's written defence: refused after its deadline (art. 69)."""

        def check(row: Any, conn: Connection) -> dict[str, Any]:
            due = self.defence_due(row.notified_on)
            if on > due:
                raise CaseError(
                    f"defesa fora do prazo: venceu em {due} ({self.proc.defence_business_days.value}"
                    f" dias úteis da ciência em {row.notified_on}, art. 69)",
                    where=f"caso {case_id}",
                    hint="o caso segue para julgamento sem defesa",
                )
            return {"defence_on": on}

        return self._act(case_id, DEFESA, by, on, reason, attachments, check)

    def julgar(
        self,
        case_id: int,
        by: Account,
        verdict: str,
        *,
        on: date,
        reason: str,
        attachments: Sequence[Attachment] = (),
    ) -> str:
        """The authority's judgment. Procedente applies the sanctions of the item (art. 67),
        doubled on a judged repeat within the window (art. 65)."""
        if verdict not in (PROCEDENTE, IMPROCEDENTE):
            raise CaseError(f"julgamento {verdict!r}: use procedente ou improcedente")

        def check(row: Any, conn: Connection) -> dict[str, Any]:
            if row.state == NOTIFICADA:
                due = self.defence_due(row.notified_on)
                if on <= due:
                    raise CaseError(
                        f"o prazo de defesa está aberto até {due} (art. 69, efeito suspensivo)",
                        where=f"caso {case_id}",
                        hint="julgue depois do prazo, ou depois da defesa apresentada",
                    )
            out: dict[str, Any] = {"judged_on": on, "verdict": verdict}
            if verdict == PROCEDENTE:
                repeat = self._is_judged_repeat(conn, row)
                sanctions, urm = self.sanctions_for(row.group, row.item, is_repeat=repeat)
                authorities = self.proc.sanction_authority.value
                out.update(
                    is_repeat=repeat,
                    sanctions=", ".join(sanctions),
                    urm=urm,
                    sanction_authority="; ".join(
                        dict.fromkeys(authorities.get(s, "?") for s in sanctions)
                    ),
                )
            else:
                out.update(is_repeat=False, sanctions=None, urm=None, sanction_authority=None)
            return out

        return self._act(case_id, JULGAR, by, on, reason, attachments, check)

    def recurso(
        self,
        case_id: int,
        by: Account,
        *,
        on: date,
        reason: str,
        attachments: Sequence[Attachment] = (),
    ) -> str:
        """The operator's appeal against a procedente judgment: within the deadline of
        art. 69-III, without suspensive effect (the sanction stands while it is decided)."""

        def check(row: Any, conn: Connection) -> dict[str, Any]:
            if row.verdict != PROCEDENTE:
                raise CaseError(
                    "só cabe recurso de julgamento procedente (art. 69-III)",
                    where=f"caso {case_id}",
                )
            due = self.appeal_due(row.judged_on)
            if on > due:
                raise CaseError(
                    f"recurso fora do prazo: venceu em {due} (art. 69-III)",
                    where=f"caso {case_id}",
                )
            return {"appeal_on": on}

        return self._act(case_id, RECURSO, by, on, reason, attachments, check)

    def encerrar(
        self,
        case_id: int,
        by: Account,
        *,
        on: date,
        reason: str,
        appeal_outcome: str | None = None,
        attachments: Sequence[Attachment] = (),
    ) -> str:
        """Close a case: after an appeal, with its outcome (provido reverses the sanction);
        a procedente case without appeal only once the appeal window has closed."""

        def check(row: Any, conn: Connection) -> dict[str, Any]:
            out: dict[str, Any] = {"closed_on": on}
            if row.state == EM_RECURSO:
                if appeal_outcome not in (PROVIDO, IMPROVIDO):
                    raise CaseError(
                        "decida o recurso: --appeal provido ou improvido",
                        where=f"caso {case_id}",
                    )
                out["appeal_outcome"] = appeal_outcome
                if appeal_outcome == PROVIDO:
                    out.update(sanctions=None, urm=None, sanction_authority=None, is_repeat=False)
            elif appeal_outcome is not None:
                raise CaseError("o caso não está em recurso", where=f"caso {case_id}")
            elif row.verdict == PROCEDENTE and on <= self.appeal_due(row.judged_on):
                raise CaseError(
                    f"o prazo de recurso está aberto até {self.appeal_due(row.judged_on)}",
                    where=f"caso {case_id}",
                )
            return out

        return self._act(case_id, ENCERRAR, by, on, reason, attachments, check)

    def descartar(
        self,
        case_id: int,
        by: Account,
        *,
        on: date,
        reason: str,
        attachments: Sequence[Attachment] = (),
    ) -> str:
        """Discard a suggestion (or an auto not sent in time), with its reason."""
        return self._act(
            case_id,
            DESCARTAR,
            by,
            on,
            reason,
            attachments,
            lambda row, conn: {"discard_reason": reason},
        )

    def hold(self, case_id: int, by: Account, *, on: bool, reason: str) -> None:
        """Set or lift the legal hold of a case (its raw days are never deleted while held)."""
        authorize(by, HOLD)
        with self.db.begin() as conn:
            _case_row(conn, case_id, lock=True)
            conn.execute(CASES.update().where(CASES.c.case_id == case_id).values(is_legal_hold=on))
            record_audit(
                conn, by.name, "legal_hold", f"caso {case_id}", f"{'on' if on else 'off'}: {reason}"
            )

    # sanctions and repeats -------------------------------------------------------------------------
    def catalogue_item(self, group: str, item: str) -> Infraction:
        for it in self.profile.infractions.items:
            if it.group == group and it.item == item:
                return it
        raise CaseError(f"item {group}-{item} não está no catálogo do perfil {self.profile.id}")

    def sanctions_for(self, group: str, item: str, *, is_repeat: bool) -> tuple[list[str], float]:
        """Sanctions by name (art. 63, 67) and the fine in URM of a procedente case."""
        it = self.catalogue_item(group, item)
        penalty = it.penalty.lower()
        first = it.urm_first or 0.0
        if is_repeat:
            urm = (
                it.urm_repeat
                if it.urm_repeat is not None
                else first * self.profile.infractions.repeat_multiplier.value
            )
        else:
            urm = first
        names: list[str] = []
        if "advertência" in penalty and not is_repeat:
            names.append("advertência")  # first offence of group A: warning without fine (67-I)
            urm = 0.0
        elif urm > 0:
            names.append("multa")
        for word, name in (
            ("afastamento", "afastamento"),
            ("recolhimento", "recolhimento"),
            ("suspensão", "suspensão"),
            ("cassação", "cassação"),
        ):
            if word in penalty:
                names.append(name)
        if not names:
            names.append("advertência")
        return names, float(urm)

    def _is_judged_repeat(self, conn: Connection, row: Any) -> bool:
        """Whether the operator has a case of the same item judged procedente (and not
        reversed on appeal) for a fact in the window before this one (art. 65 §2)."""
        # calendar months, as the law counts them (BG art. 65 §2: "nos 06 meses")
        since = repeat_window_start(
            row.occurred_on, self.profile.infractions.repeat_window_months.value
        )
        n = conn.execute(
            sa.select(sa.func.count())
            .select_from(CASES)
            .where(
                CASES.c.case_id != row.case_id,
                CASES.c.operator_id == row.operator_id,
                CASES.c.group == row.group,
                CASES.c.item == row.item,
                CASES.c.verdict == PROCEDENTE,
                sa.or_(CASES.c.appeal_outcome.is_(None), CASES.c.appeal_outcome != PROVIDO),
                CASES.c.occurred_on >= since,
                CASES.c.occurred_on < row.occurred_on,
            )
        ).scalar()
        return bool(n)

    def count_suspensions(self, operator_id: str, as_of: date) -> int:
        """Suspensions applied to the operator (judged procedente, not reversed) in the months
        of art. 72-I before `as_of`; more than one is a ground for cassação."""
        months = self.proc.suspension_window_months.value
        since = _months_before(as_of, months)
        with self.db.read() as conn:
            n = conn.execute(
                sa.select(sa.func.count())
                .select_from(CASES)
                .where(
                    CASES.c.operator_id == operator_id,
                    CASES.c.verdict == PROCEDENTE,
                    sa.or_(CASES.c.appeal_outcome.is_(None), CASES.c.appeal_outcome != PROVIDO),
                    CASES.c.sanctions.like("%suspensão%"),
                    CASES.c.judged_on > since,
                    CASES.c.judged_on <= as_of,
                )
            ).scalar()
        return int(n or 0)

    # overdue -------------------------------------------------------------------------------------
    def overdue(self, account: Account, today: date) -> pl.DataFrame:
        """Cases whose next act is late: case_id, state, operator_id, pending (the act due),
        due_on, days_late (calendar days after due_on)."""
        cases = list_cases(self.db, account)
        with self.db.read() as conn:
            rows = conn.execute(
                sa.select(
                    CASES.c.case_id,
                    CASES.c.state,
                    CASES.c.operator_id,
                    CASES.c.lavrada_on,
                    CASES.c.defence_on,
                ).where(
                    CASES.c.state.in_((LAVRADA, EM_DEFESA)),
                    CASES.c.case_id.in_(cases["case_id"].to_list()),
                )
            ).all()
        out = []
        for (
            r
        ) in rows:  # open cases awaiting an act of the administration: a handful, not a hot path
            if r.state == LAVRADA:
                pending, due = "notificar (art. 68 §2)", self.auto_due(r.lavrada_on)
            else:
                pending, due = "julgar (art. 69-I)", self.judgment_due(r.defence_on)
            if today > due:
                out.append((r.case_id, r.state, r.operator_id, pending, due, (today - due).days))
        return pl.DataFrame(
            out,
            schema={
                "case_id": pl.Int64,
                "state": pl.String,
                "operator_id": pl.String,
                "pending": pl.String,
                "due_on": pl.Date,
                "days_late": pl.Int64,
            },
            orient="row",
        )


def _months_before(day: date, months: int) -> date:
    month0 = day.year * 12 + (day.month - 1) - months
    year, month = divmod(month0, 12)
    for d in (day.day, 30, 29, 28):
        try:
            return date(year, month + 1, d)
        except ValueError:
            continue
    raise AssertionError("unreachable")
