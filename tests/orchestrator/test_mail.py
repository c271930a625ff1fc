"""Mail delivery backends and retries: the Maildir default, SMTP through a real aiosmtpd server, null."""
from __future__ import annotations

import socket

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message

from orchestrator import accounts, auth, mail, outbox
from orchestrator.core import Core
from tests.waiting import until


class _Inbox(Message):
    def __init__(self):
        super().__init__()
        self.received = []

    def handle_message(self, message):
        self.received.append(message)


def _core(tmp_path, config: str) -> Core:
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(config)
    return Core.open(data)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_smtp_backend_retries_until_the_server_answers(tmp_path):
    port = _free_port()
    core = _core(tmp_path, f'[mail]\nbackend = "smtp"\n[smtp]\nhost = "127.0.0.1"\nport = {port}\nfrom = "studio@test"\n')
    accounts.create_account(core, "r@example.org")
    token, _ = auth.mint(core, "r@example.org", name="retried")
    [notice] = outbox.messages(core)
    assert notice["sent_at_ms"] is None and notice["send_error"]  # nobody listens yet
    assert mail.deliver_due(core) == 0  # not due again before the back-off ends
    inbox = _Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        core.store.conn().execute("UPDATE email_outbox SET next_attempt_at_ms = 0")
        assert mail.deliver_due(core) == 1
    finally:
        controller.stop()
    [got] = inbox.received
    assert got["To"] == "r@example.org" and "retried" in got.get_payload() and token not in got.get_payload()
    [notice] = outbox.messages(core)
    assert notice["sent_at_ms"] is not None and notice["send_error"] is None


def test_gives_up_after_max_attempts(tmp_path):
    core = _core(tmp_path, f'[mail]\nbackend = "smtp"\nmax_attempts = 2\n[smtp]\nhost = "127.0.0.1"\nport = {_free_port()}\n')
    accounts.create_account(core, "g@example.org")
    auth.mint(core, "g@example.org")
    for _ in range(3):
        core.store.conn().execute("UPDATE email_outbox SET next_attempt_at_ms = 0")
        mail.deliver_due(core)
    row = core.store.one("SELECT attempts, sent_at_ms FROM email_outbox")
    assert row["attempts"] == 2 and row["sent_at_ms"] is None


def test_null_backend_keeps_notices_in_the_table(tmp_path):
    core = _core(tmp_path, '[mail]\nbackend = "null"\n')
    accounts.create_account(core, "n@example.org")
    auth.mint(core, "n@example.org")
    [notice] = outbox.messages(core)
    assert notice["sent_at_ms"] is None and notice["send_error"] is None
    assert not (core.data_dir / "mail").exists()


def test_background_mailer_delivers_without_blocking_the_caller(tmp_path):
    core = _core(tmp_path, "")
    accounts.create_account(core, "b@example.org")
    mailer = mail.Mailer(core, interval_s=30)
    mailer.start()
    try:
        auth.mint(core, "b@example.org", name="background")
        until(lambda: list(mail.maildir(core)), 5, what="the mailer's delivery")
    finally:
        mailer.stop()
    [msg] = list(mail.maildir(core))
    assert msg["To"] == "b@example.org" and "background" in msg.get_payload()


def test_opening_the_maildir_from_many_threads_at_once_never_fails(tmp_path):
    # Maildir(create=True) checked for the folder, then made it: a reader opening it while the mail
    # thread delivered the first notice raised FileExistsError there, and the notice waited 30 s
    import threading

    for k in range(20):
        (tmp_path / str(k)).mkdir()
        core = _core(tmp_path / str(k), "")
        start, errors = threading.Barrier(8), []

        def open_it():
            start.wait()
            try:
                mail.maildir(core)
            except OSError as e:
                errors.append(e)
        threads = [threading.Thread(target=open_it) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert sorted(p.name for p in (core.data_dir / "mail").iterdir()) == ["cur", "new", "tmp"]
