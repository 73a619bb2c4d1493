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

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cases.audit import record_audit
from cases.calendar import BusinessCalendar, procedure_of
from cases.db import CASE_EVENTS, CASE_EVIDENCE, CASES, CaseDB, now_utc
from cases.deadlines import CaseDeadlines
from cases.errors import AUTO_FIELDS, CaseError
from cases.register import read_case_row
from cases.roles import (
    DEFESA,
    DESCARTAR,
    ENCERRAR,
    HOLD,
    JULGAR,
    LAVRAR,
    NOTIFICAR,
    RECURSO,
    Account,
    authorize,
)
from cases.sanctions import CaseSanctions
from cases.states import (
    EM_RECURSO,
    IMPROCEDENTE,
    IMPROVIDO,
    NOTIFICADA,
    PROCEDENTE,
    PROVIDO,
    TRANSITIONS,
    Attachment,
    Auto,
)
from core.profile import Profile


# -- the transitions -----------------------------------------------------------------------------
class Workflow(CaseDeadlines, CaseSanctions):
    """Acts on cases under one profile (deadlines, calendar, catalogue, sanctions)."""

    def __init__(self, db: CaseDB, profile: Profile) -> None:
        self.db = db
        self.profile = profile
        self.proc = procedure_of(profile)
        self.calendar = BusinessCalendar.from_profile(profile)

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
            raise CaseError("say why (--reason)", hint="every act of a case records its reason")
        today = datetime.now(ZoneInfo(self.profile.general.timezone.value)).date()
        if on > today:
            raise CaseError(
                f"act date {on} in the future (today is {today})",
                hint="record the act on the date it was done",
            )
        with self.db.begin() as conn:
            row = read_case_row(conn, case_id, lock=True)
            authorize(by, action, operator_id=row.operator_id)
            target = TRANSITIONS.get((row.state, action))
            if target is None:
                allowed = [a for (s, a) in TRANSITIONS if s == row.state]
                raise CaseError(
                    f"case {case_id} is '{row.state}': '{action}' is not allowed",
                    hint=(
                        "acts possible now: " + ", ".join(allowed)
                        if allowed
                        else "the case is closed"
                    ),
                )
            last = conn.execute(
                sa.select(sa.func.max(CASE_EVENTS.c.on_date)).where(
                    CASE_EVENTS.c.case_id == case_id
                )
            ).scalar()
            if last is not None and on < last:
                raise CaseError(
                    f"act date {on} before the case's last act ({last})",
                    hint="the acts of a case follow the order of time",
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
                    f"case {case_id} was changed by someone else at the same time",
                    hint="look the case up and repeat the act",
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
                    "date and time of the fact without a time zone",
                    where=f"case {case_id}, field fact_at",
                )
            if missing:
                raise CaseError(
                    "required fields of the infraction notice missing (art. 68 §1): "
                    + "; ".join(AUTO_FIELDS[m] for m in missing),
                    where=f"case {case_id}",
                )
            if has_coords and not (
                -90 <= (auto.place_lat or 0) <= 90 and -180 <= (auto.place_lon or 0) <= 180
            ):
                raise CaseError("coordinates outside the WGS 84 range", where=f"case {case_id}")
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
                f"notice number {auto.auto_number!r} already used in another case",
                where=f"case {case_id}",
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
                    f"sending deadline of the notice passed on {due} (art. 68 §2: "
                    f"{self.proc.auto_send_days.value} days from drawing up on {row.lavrada_on})",
                    where=f"case {case_id}",
                    hint="a notice sent past the deadline is void: discard the case with the reason",
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
                    f"defence past the deadline: it ended on {due} ({self.proc.defence_business_days.value}"
                    f" business days from notice on {row.notified_on}, art. 69)",
                    where=f"case {case_id}",
                    hint="the case goes to judgement without a defence",
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
            raise CaseError(f"verdict {verdict!r}: use procedente or improcedente")

        def check(row: Any, conn: Connection) -> dict[str, Any]:
            if row.state == NOTIFICADA:
                due = self.defence_due(row.notified_on)
                if on <= due:
                    raise CaseError(
                        f"the defence deadline is open until {due} (art. 69, suspensive effect)",
                        where=f"case {case_id}",
                        hint="judge after the deadline, or after the defence is filed",
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
                    "only a procedente verdict can be appealed (art. 69-III)",
                    where=f"case {case_id}",
                )
            due = self.appeal_due(row.judged_on)
            if on > due:
                raise CaseError(
                    f"appeal past the deadline: it ended on {due} (art. 69-III)",
                    where=f"case {case_id}",
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
                        "decide the appeal: --appeal provido or improvido",
                        where=f"case {case_id}",
                    )
                out["appeal_outcome"] = appeal_outcome
                if appeal_outcome == PROVIDO:
                    out.update(sanctions=None, urm=None, sanction_authority=None, is_repeat=False)
            elif appeal_outcome is not None:
                raise CaseError("the case is not under appeal", where=f"case {case_id}")
            elif row.verdict == PROCEDENTE and on <= self.appeal_due(row.judged_on):
                raise CaseError(
                    f"the appeal deadline is open until {self.appeal_due(row.judged_on)}",
                    where=f"case {case_id}",
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
            read_case_row(conn, case_id, lock=True)
            conn.execute(CASES.update().where(CASES.c.case_id == case_id).values(is_legal_hold=on))
            record_audit(
                conn, by.name, "legal_hold", f"caso {case_id}", f"{'on' if on else 'off'}: {reason}"
            )
