"""Notices leave through SMTP when config.toml has [smtp]; a failed send stays readable in the outbox."""
from __future__ import annotations

import socket
import socketserver
import threading

from orchestrator import accounts, auth, outbox
from orchestrator.core import Core


class _SMTPHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP for smtplib.send_message: greet, accept envelope and data, record the message."""

    def handle(self) -> None:
        self.wfile.write(b"220 test\r\n")
        while line := self.rfile.readline():
            verb = line.split(b" ")[0].strip().upper()
            if verb == b"DATA":
                self.wfile.write(b"354 go\r\n")
                data = b""
                while (chunk := self.rfile.readline()) != b".\r\n":
                    data += chunk
                self.server.received.append(data.decode())
                self.wfile.write(b"250 queued\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                self.wfile.write(b"250 ok\r\n")


def _core_with_smtp(tmp_path, port: int) -> Core:
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(f'[smtp]\nhost = "127.0.0.1"\nport = {port}\nfrom = "studio@test"\n')
    return Core.open(data)


def test_notices_are_sent_through_smtp(tmp_path):
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SMTPHandler)
    server.received = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        core = _core_with_smtp(tmp_path, server.server_address[1])
        accounts.create_account(core, "s@example.org")
        token, _ = auth.mint(core, "s@example.org", name="mailed")
        assert len(server.received) == 1
        assert "To: s@example.org" in server.received[0] and "mailed" in server.received[0]
        assert token not in server.received[0]
        assert outbox.messages(core)[0]["sent_at_ms"] is not None
    finally:
        server.shutdown()
        server.server_close()


def test_a_failed_send_is_recorded_and_the_notice_kept(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    core = _core_with_smtp(tmp_path, closed_port)
    accounts.create_account(core, "t@example.org")
    auth.mint(core, "t@example.org")
    [notice] = outbox.messages(core)
    assert notice["sent_at_ms"] is None and notice["send_error"]
