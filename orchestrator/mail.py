"""Delivery of the email outbox, with retries (backends after Django's: outbox, smtp, null).

    [mail]
    backend = "outbox"   # default: a Maildir under the data dir (data-dir/mail), readable by any mail client
    # backend = "smtp"   # uses the [smtp] table (host, port, from, starttls, username, password)
    # backend = "null"   # notices stay in the outbox table only
    max_attempts = 6

With an [smtp] table and no [mail] backend it sends through SMTP. The wait after a failed attempt
starts at RETRY_BASE_MS and doubles; after max_attempts the notice stays unsent (`studio outbox list`).
"""
from __future__ import annotations

import logging
import mailbox
import smtplib
import threading
from email.message import EmailMessage

from orchestrator.core import Core
from orchestrator.records.account import Notice
from orchestrator.store import outbox

log = logging.getLogger("studio.mail")
BACKENDS = ("outbox", "smtp", "null")
RETRY_BASE_MS = 30_000
DEFAULT_MAX_ATTEMPTS = 6


def backend(core: Core) -> str:
    chosen = (core.config.get("mail") or {}).get("backend")
    if chosen is None:
        return "smtp" if core.config.get("smtp") else "outbox"
    if chosen not in BACKENDS:
        raise ValueError(f"[mail] backend must be one of {', '.join(BACKENDS)}; got {chosen!r}")
    return chosen


def maildir(core: Core) -> mailbox.Maildir:
    # Made here with exist_ok rather than by Maildir(create=True), whose check-then-mkdir raised
    # FileExistsError when a reader opened the folder while the mail thread did: the notice then
    # counted a failed attempt and waited 30 s for the next
    path = core.data_dir / "mail"
    for sub in ("", "tmp", "new", "cur"):
        (path / sub).mkdir(mode=0o700, exist_ok=True)
    return mailbox.Maildir(path, create=False)


def _message(core: Core, notice: Notice) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = (core.config.get("smtp") or {}).get("from", "studio@localhost")
    msg["To"] = notice.to
    msg["Subject"] = notice.subject
    msg.set_content(notice.body)
    return msg


def _send_smtp(core: Core, msg: EmailMessage) -> None:
    smtp = core.config["smtp"]
    with smtplib.SMTP(smtp["host"], int(smtp.get("port", 25)), timeout=10) as s:
        if smtp.get("starttls"):
            s.starttls()
        if smtp.get("username"):
            s.login(smtp["username"], smtp.get("password", ""))
        s.send_message(msg)


def deliver_due(core: Core) -> int:
    """One attempt for every notice that is due; returns how many left. Safe to call from any thread."""
    kind = backend(core)
    if kind == "null":
        return 0
    max_attempts = int((core.config.get("mail") or {}).get("max_attempts", DEFAULT_MAX_ATTEMPTS))
    now = core.clock.now_ms()
    sent = 0
    for notice in outbox.due(core.store.conn(), max_attempts, now):
        try:
            msg = _message(core, notice)
            if kind == "smtp":
                _send_smtp(core, msg)
            else:
                maildir(core).add(msg)
        except (OSError, smtplib.SMTPException) as e:
            # The notice stays readable in the outbox; the error says why it has not left yet.
            with core.store.write() as c:
                outbox.failed(c, notice.id, str(e)[:500], core.clock.now_ms() + RETRY_BASE_MS * 2 ** notice.attempts)
            continue
        with core.store.write() as c:
            outbox.sent(c, notice.id, core.clock.now_ms())
        sent += 1
    return sent


class Mailer:
    """The service's background sender: woken when a notice is queued, and every few seconds for retries."""

    def __init__(self, core: Core, interval_s: float = 5.0):
        self.core, self.interval_s = core, interval_s
        self._wake, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._loop, name="studio-mail", daemon=True)

    def start(self) -> None:
        _mailers[id(self.core)] = self
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        _mailers.pop(id(self.core), None)
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=15)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                deliver_due(self.core)
            except Exception as e:  # a bad config or a full disk must not end the thread; retry next round
                log.warning("mail delivery failed: %s", e)
            self._wake.wait(self.interval_s)
            self._wake.clear()


_mailers: dict[int, Mailer] = {}


def notify(core: Core) -> int:
    """A notice was queued: wake this core's mailer, or (no service running here) deliver now."""
    mailer = _mailers.get(id(core))
    if mailer is not None:
        mailer.wake()
        return 0
    return deliver_due(core)
