"""Who may open the planners' dashboard, and which pages each role gets (issue #23).

No Streamlit here (`dashboard.auth_ui` draws the login form): the authentication mode, the
page list of each role, the refusal to expose an unauthenticated dashboard, and the mapping
of an OpenID Connect identity to a Pontual account.

Modes (PONTUAL_DASHBOARD_AUTH, ADR 0070):
- ``local``: local accounts of the case database (argon2 hashes, `pontual users add`);
- ``oidc``: OpenID Connect through Streamlit's native `st.login`; the provider is configured
  in a Streamlit secrets file (``[auth]``: client_id, client_secret, server_metadata_url,
  redirect_uri, cookie_secret) named by PONTUAL_DASHBOARD_SECRETS. The provider proves who
  the person is; the role comes from the Pontual account of the same name (the e-mail, else
  the preferred user name, else the subject), made with `pontual users add --oidc`;
- ``none``: no login, one planner on this machine (`planejamento`); refused on any address
  other than the loopback.
Unset, the mode is ``local`` as soon as the case database holds an account, else ``none``.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cases.accounts import count_users, get_account
from cases.db import CaseDB
from cases.errors import AccountError
from cases.roles import (
    READ_AUDIT,
    READ_CASES,
    READ_DOSSIER,
    READ_INDICES,
    READ_SUGGESTIONS,
    READ_VERDICTS,
    Account,
    may,
)
from core.errors import ConfigError
from core.settings import Settings
from core.texts import N_
from dashboard.pages import PAGES

AUTH_ENV = "PONTUAL_DASHBOARD_AUTH"
SECRETS_ENV = "PONTUAL_DASHBOARD_SECRETS"
AUTH_MODES = ("local", "oidc", "none")

LOCAL_PLANNER = Account("local", "planejamento")
"""The session's account in mode ``none`` (a planner on their own machine)."""

PAGE_ACTIONS: dict[str, tuple[str, ...]] = {
    "visao-geral": (READ_INDICES,),
    "linhas": (READ_INDICES,),
    "viagem": (READ_INDICES,),
    "lotacao": (READ_INDICES,),
    "frota": (READ_INDICES,),
    "ao-vivo": (READ_INDICES,),
    "precisao": (READ_INDICES,),
    "avaliacao-anual": (READ_DOSSIER,),
    "tendencias": (READ_INDICES, READ_DOSSIER),
    "qualidade": (READ_INDICES,),
    "infracoes": (READ_SUGGESTIONS,),
    "casos": (READ_CASES, READ_VERDICTS),
    "auditoria": (READ_AUDIT,),
}
"""The acts (any one suffices) that open each page, by URL path."""


def resolve_auth_mode(settings: Settings) -> str:
    """The dashboard's authentication mode: PONTUAL_DASHBOARD_AUTH, else ``local`` when the
    case database has an account, else ``none``."""
    mode = os.environ.get(AUTH_ENV, "").strip().lower()
    if mode:
        if mode not in AUTH_MODES:
            raise ConfigError(
                f"{AUTH_ENV}={mode!r} is not a dashboard authentication mode",
                hint="use one of: " + ", ".join(AUTH_MODES),
            )
        if mode == "oidc" and not os.environ.get(SECRETS_ENV):
            raise ConfigError(
                f"{AUTH_ENV}=oidc needs the provider's settings",
                hint=f"set {SECRETS_ENV} to a Streamlit secrets file with an [auth] section "
                "(see deploy/README.md)",
            )
        return mode
    url = settings.cases_db_url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return "none"  # no case database yet: no account (and none is created here)
    with CaseDB.open(url) as db:
        return "local" if count_users(db) else "none"


def is_loopback(address: str) -> bool:
    """Whether `address` only listens on this machine (127.0.0.0/8, ::1, 'localhost')."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def check_exposure(address: str, mode: str) -> None:
    """Refuse (exit 2) to serve an unauthenticated dashboard beyond this machine."""
    if mode == "none" and not is_loopback(address):
        raise ConfigError(
            f"the dashboard without authentication cannot listen on {address}: anyone on the "
            "network would see infractions, plates and cases",
            hint="create an account (`pontual users add NAME --role planejamento`) or set "
            f"{AUTH_ENV}=oidc; for the public page use `pontual dashboard --public`",
        )


def pages_for(account: Account) -> list[tuple[str, str, str, str]]:
    """The pages (file, title, URL path, icon) `account` may open, in menu order."""
    return [
        page
        for page in (*PAGES, *EXTRA_PAGES)
        if any(may(account, action) for action in PAGE_ACTIONS[page[2]])
    ]


EXTRA_PAGES = (
    ("pages/cases.py", N_("Cases"), "casos", ":material/folder_open:"),
    ("pages/audit.py", N_("Audit"), "auditoria", ":material/policy:"),
)
"""Pages only some roles see (not in the public list `dashboard.pages.PAGES`)."""


@dataclass(frozen=True)
class OidcIdentity:
    """Who the provider says logged in: the claim used as the account name, and its value."""

    claim: str
    name: str


IDENTITY_CLAIMS = ("email", "preferred_username", "sub")


def to_oidc_identity(claims: Mapping[str, Any]) -> OidcIdentity | None:
    """The first of e-mail, preferred user name and subject the provider gave (None: none)."""
    for claim in IDENTITY_CLAIMS:
        value = claims.get(claim)
        if isinstance(value, str) and value.strip():
            return OidcIdentity(claim, value.strip())
    return None


def account_for_identity(db: CaseDB, identity: OidcIdentity) -> Account:
    """The active Pontual account named as the provider's identity (AccountError when none:
    a person the provider knows has no role in Pontual until a planner gives one)."""
    try:
        return get_account(db, identity.name)
    except AccountError as exc:
        raise AccountError(
            f"{identity.name} signed in through the identity provider but has no Pontual account",
            hint=f"`pontual users add {identity.name} --role ROLE --oidc`",
        ) from exc
