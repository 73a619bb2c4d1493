"""The dashboard's login (local form or OpenID Connect via `st.login`), the session's account,
and the page that refuses a page the account may not open. Rules in `dashboard.auth`.

The session's account lives in `st.session_state["account"]`; `dashboard.state.load` reads it
to limit every query to what the account may see (`dashboard.queries.scope`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import streamlit as st

from cases.accounts import authenticate, record_login
from cases.audit import audit
from cases.db import CaseDB
from cases.errors import AccountError, said, to_local_text
from cases.roles import ROLE_LABELS, Account
from core.settings import Settings
from core.texts import gettext as _
from dashboard.auth import (
    AUTH_ENV,
    LOCAL_PLANNER,
    account_for_identity,
    resolve_auth_mode,
    to_oidc_identity,
)

ACCOUNT_KEY = "account"


def settings() -> Settings:
    return Settings.resolve()


@st.cache_resource(show_spinner=False)
def _auth_mode(env_mode: str, store_path: str) -> str:
    # Resolved once per server process (`pontual dashboard` sets AUTH_ENV explicitly).
    return resolve_auth_mode(settings())


def auth_mode() -> str:
    return _auth_mode(os.environ.get(AUTH_ENV, ""), str(settings().store_path))


def case_db() -> CaseDB:
    """A connection to the case database (accounts, audit log, cases); close it after use."""
    return CaseDB.open(settings().cases_db_url)


def current_account() -> Account | None:
    """Who this session is (None: nobody has logged in yet)."""
    mode = auth_mode()
    if mode == "none":
        return LOCAL_PLANNER
    account: Account | None = st.session_state.get(ACCOUNT_KEY)
    if account is not None or mode != "oidc":
        return account
    if not st.user.is_logged_in:
        return None
    identity = to_oidc_identity(st.user.to_dict())
    if identity is None:
        st.error(_("The identity provider gave no e-mail, user name or identifier."))
        st.stop()
    try:
        with case_db() as db:
            account = account_for_identity(db, identity)
            record_login(db, account, f"OpenID Connect ({identity.claim})")
    except AccountError as exc:
        st.title(_("No access to the dashboard"))
        st.error(to_local_text(exc.what))
        if exc.hint:
            st.caption(_("Ask the planning team: {hint}", hint=to_local_text(exc.hint)))
        st.button(_("Log out"), on_click=st.logout, key="oidc_logout")
        st.stop()
    st.session_state[ACCOUNT_KEY] = account
    return account


def render_login() -> None:
    """The login screen (form of a local account, or the identity provider's button)."""
    st.title(_("Log in to Pontual"))
    if auth_mode() == "oidc":
        st.write(_("Access to the dashboard goes through the city's identity provider."))
        st.button(_("Log in with the identity provider"), on_click=st.login, type="primary")
        return
    with st.form("login"):
        name = st.text_input(_("Account"))
        password = st.text_input(_("Password"), type="password")
        submitted = st.form_submit_button(_("Log in"), type="primary")
    if not submitted:
        st.caption(
            _(
                "Local accounts are created by `pontual users add NAME --role ROLE`. The "
                "public transparency page asks for no login (`pontual dashboard "
                "--public`)."
            )
        )
        return
    try:
        with case_db() as db:
            account = authenticate(db, name.strip(), password)
    except AccountError as exc:
        st.error(said(exc))
        return
    st.session_state[ACCOUNT_KEY] = account
    st.rerun()


def build_login(url_path: str) -> Callable[[], None]:
    """The login form served at a page's URL before anyone has logged in."""

    def login() -> None:
        render_login()

    login.__name__ = f"login_{url_path.replace('-', '_')}"
    return login


def logout() -> None:
    st.session_state.pop(ACCOUNT_KEY, None)
    if auth_mode() == "oidc":
        st.logout()


def render_account(account: Account) -> None:
    """Who is logged in (sidebar), with the logout button."""
    role = ROLE_LABELS.get(account.role, account.role)
    who = f"{account.name} · {role}" + (f" ({account.operator_id})" if account.operator_id else "")
    st.sidebar.caption(_("Account: {who}", who=who))
    if auth_mode() != "none":
        st.sidebar.button(_("Log out"), icon=":material/logout:", on_click=logout, key="logout")


def build_refusal(account: Account, title: str, url_path: str) -> Callable[[], None]:
    """The page served at a URL `account` may not open: says so in pt-BR and audits it (the
    page's own script is not registered for this account)."""

    def refuse() -> None:
        st.title(_("Access denied"))
        role = ROLE_LABELS.get(account.role, account.role)
        st.error(
            _(
                "The account {name} ({role}) has no access to the page “{title}”.",
                name=account.name,
                role=role,
                title=title,
            )
        )
        with case_db() as db:
            audit(db, account.name, "access_denied", url_path, f"página {title}")

    refuse.__name__ = f"refuse_{url_path.replace('-', '_')}"
    return refuse
