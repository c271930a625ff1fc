"""The seats' HTTP transport: TLS, refused connections, keep-alive connections the server closed."""
import asyncio
import datetime
import ipaddress
import ssl

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from orchestrator.seats import SeatPlayer, new_client, play_tick
from tests.seats.conftest import external_match, players_for, rows_of, run
from tests.seats.fake_provider import FakeProvider

ROUTER = {"model": "r/m", "provider": "router"}


def self_signed(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    certfile, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return str(certfile), str(keyfile)


def test_a_turn_over_tls_verifies_the_server_certificate(tmp_path):
    certfile, keyfile = self_signed(tmp_path)
    fake = FakeProvider({"calls": [("eat", {})]}).start(certfile=certfile, keyfile=keyfile)
    try:
        match = external_match(1)
        trusting = ssl.create_default_context(cafile=certfile)

        async def go(ctx):
            async with new_client(ssl_context=ctx, private_ok=True) as client:
                return await play_tick(match, players_for(fake, client, {0: ROUTER}, timeout_ms=3000))

        report = run(go(trusting))
        assert fake.url.startswith("https://") and not report.waits
        assert [r["kind"] for r in rows_of(match, 0, tick=0)] == ["eat"]
        # the default context does not trust a self-signed certificate: the seat gets no reply
        report = run(go(ssl.create_default_context()))
        assert report.waits == {0: "no_reply"}
    finally:
        fake.stop()


def test_a_refused_connection_is_retried_then_the_seat_waits_no_reply():
    match = external_match(1)

    async def go():
        async with new_client(private_ok=True) as client:
            # nothing listens on port 9 (discard) of the loopback
            players = {0: SeatPlayer(0, ROUTER, key="k", client=client, base_url="http://127.0.0.1:9/v1",
                                     turn_timeout_ms=800)}
            return await play_tick(match, players), players

    report, players = run(go())
    assert report.waits == {0: "no_reply"} and "connection failed" in players[0].last_error
    assert [(r["kind"], r["a"]) for r in rows_of(match, 0, tick=0)] == [("wait", 2)]


def test_keep_alive_connections_closed_by_the_server_are_replaced():
    fake = FakeProvider({"calls": [("eat", {})]}).start(keep_alive_s=0.3)
    try:
        match = external_match(2, ticks=4)

        async def go():
            async with new_client(private_ok=True) as client:
                players = players_for(fake, client, {0: ROUTER, 1: dict(ROUTER, model="r/n")}, timeout_ms=3000)
                reports = []
                for _ in range(3):
                    reports.append(await play_tick(match, players))
                    await asyncio.sleep(0.6)  # the server drops the idle connection meanwhile
                return reports, players

        reports, players = run(go())
        assert not any(r.waits for r in reports)
        assert len(fake.requests) == 6
        # a stale connection would fail its send and be retried; a replaced one is not
        assert [p.chat.retries for p in players.values()] == [0, 0]
    finally:
        fake.stop()


def test_the_client_is_an_httpx_async_client_for_other_calls(fake):
    fake.key_info = {"limit_remaining": 1.5}

    async def go():
        async with new_client(private_ok=True) as client:
            assert isinstance(client, httpx.AsyncClient)
            r = await client.get(fake.url + "/v1/key", headers={"Authorization": "Bearer k"})
            return r.status_code, r.json()

    assert run(go()) == (200, {"data": {"limit_remaining": 1.5}})
    with pytest.raises(httpx.ConnectError):
        run(new_client(private_ok=True).get("http://127.0.0.1:9/"))
