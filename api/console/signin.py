"""Signing in and out of the console: a one-time link or a password; the session lives in a cookie
scoped to /console, never usable on the API."""
from __future__ import annotations

import asyncio
import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api.console.pages import COOKIE, ConsoleUser, page, refused
from api.errors import client_address
from orchestrator import console_auth
from orchestrator.errors import DomainError

LOGIN_CSRF_COOKIE = "studio_login_csrf"
router = APIRouter(include_in_schema=False)


def _login_form(request: Request, status: int = 200, error: str | None = None) -> HTMLResponse:
    token = secrets.token_urlsafe(24)
    resp = page(request, "login.html", None, status=status, csrf=token, error=error)
    resp.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, samesite="lax", secure=request.url.scheme == "https")
    return resp


def _signed_in(request: Request, sid: str) -> Response:
    resp = RedirectResponse("/console", status_code=303)
    resp.set_cookie(COOKIE, sid, httponly=True, samesite="lax", secure=request.url.scheme == "https",
                    path="/console")
    resp.delete_cookie(LOGIN_CSRF_COOKIE)
    return resp


@router.get("/")
async def root():
    return RedirectResponse("/console", status_code=303)


@router.get("/console/login")
async def login_page(request: Request):
    return _login_form(request)


@router.post("/console/login")
async def login_submit(request: Request):
    form = dict(await request.form())
    sent, expected = form.get("csrf") or "", request.cookies.get(LOGIN_CSRF_COOKIE) or ""
    try:
        if not console_auth.same_token(sent, expected):
            raise DomainError("csrf_failed", "this form is stale or came from another site; reload the page and "
                              "try again")
        sid = await asyncio.to_thread(console_auth.sign_in_password, request.app.state.core, form.get("email", ""),
                                      form.get("password", ""), client_address(request) or "?")
    except DomainError as e:
        return refused(e, _login_form, request)
    return _signed_in(request, sid)


@router.get("/console/login/link/{secret}")
async def login_link(request: Request, secret: str):
    try:
        sid = await asyncio.to_thread(console_auth.redeem_link, request.app.state.core, secret,
                                      client_address(request) or "?")
    except DomainError as e:
        return refused(e, _login_form, request)
    return _signed_in(request, sid)


@router.post("/console/logout")
async def logout(user: ConsoleUser):
    form = await user.form()
    await asyncio.to_thread(console_auth.sign_out, user.core, user.session, everywhere=form.get("everywhere") == "1")
    resp = RedirectResponse("/console/login", status_code=303)
    resp.delete_cookie(COOKIE, path="/console")
    return resp
