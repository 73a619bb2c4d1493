"""`pontual listen` over TLS, against the tests' real Mosquitto with a TLS listener added: a
throwaway CA signs the broker's certificate, an operator publishes over TLS, the listener
(CLI, verifying the certificate and its host) stores the messages; a client without the CA,
or trusting another CA, fails with the CLI's error message, not a traceback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from ipaddress import IPv4Address
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from core.store import Store
from ingest.mqtt import MqttConsumer
from ingest.mqtt_batches import make_batch_writer
from ingest.mqtt_options import ListenerOptions
from pontual.cli import main
from tests.mosquitto import LISTENER_USER, Broker, free_port, require_mosquitto, wait_port

T0 = 1_772_452_800  # 2026-03-02 12:00:00 UTC


@dataclass(frozen=True)
class Pki:
    """A CA and the broker's certificate (for 127.0.0.1) signed by it, as PEM files."""

    ca: Path
    server_cert: Path
    server_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def build_pki(folder: Path, name: str = "Pontual test CA") -> Pki:
    """A fresh CA named `name` and a server certificate for 127.0.0.1/localhost, valid 1 day."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca_cert.subject)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(IPv4Address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pki = Pki(folder / "ca.crt", folder / "server.crt", folder / "server.key")
    pki.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    pki.server_cert.write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    _write_key(server_key, pki.server_key)
    return pki


@dataclass
class TlsBroker:
    broker: Broker
    tls_port: int
    pki: Pki


@pytest.fixture
def tls_broker(tmp_path: Path) -> Iterator[TlsBroker]:
    """The tests' Mosquitto (passwords, per-operator ACL) with a TLS listener on a free port."""
    require_mosquitto()
    pki = build_pki(tmp_path / "pki")
    broker = Broker(tmp_path / "broker")
    conf = broker.write_config()
    tls_port = free_port()
    with conf.open("a") as fh:
        fh.write(
            f"\nlistener {tls_port} 127.0.0.1\n"
            f"cafile {pki.ca}\ncertfile {pki.server_cert}\nkeyfile {pki.server_key}\n"
            "tls_version tlsv1.2\n"
        )
    with broker:
        wait_port(tls_port, timeout_s=10)
        yield TlsBroker(broker, tls_port, pki)


def publish_over_tls(tb: TlsBroker, messages: list[tuple[str, bytes]]) -> list[int]:
    """Publish as operator opA over TLS (certificate and host checked) with QoS 1; the PUBACK
    reason codes (0: accepted)."""
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id="bus-tls", protocol=mqtt.MQTTv5
    )
    client.username_pw_set("opA", tb.broker.passwords["opA"])
    client.tls_set(ca_certs=str(tb.pki.ca))
    acked: dict[int, int] = {}
    client.on_publish = lambda _c, _u, mid, reason, _p: acked.__setitem__(mid, reason.value)
    client.connect("127.0.0.1", tb.tls_port)
    client.loop_start()
    try:
        mids = [client.publish(topic, body, qos=1).mid for topic, body in messages]
        deadline = time.monotonic() + 10
        while not all(m in acked for m in mids) and time.monotonic() < deadline:
            time.sleep(0.02)
        client.disconnect()
    finally:
        client.loop_stop()
    return [acked.get(m, -1) for m in mids]


def _listen(store_path: Path, tb: TlsBroker, *extra: str) -> int:
    return main(
        [
            "--store",
            str(store_path),
            "listen",
            "--port",
            str(tb.tls_port),
            "--username",
            LISTENER_USER,
            "--password",
            tb.broker.passwords[LISTENER_USER],
            "--batch-interval-s",
            "0.2",
            "--snapshot-interval-s",
            "0",
            "--idle-exit-s",
            "1",
            *extra,
        ]
    )


def test_listen_over_tls_stores_what_operators_publish_over_tls(
    tls_broker: TlsBroker, store_path: Path, capsys
) -> None:
    # The listener's persistent session, opened over TLS, keeps what is published next.
    options = ListenerOptions(
        port=tls_broker.tls_port,
        username=LISTENER_USER,
        password=tls_broker.broker.passwords[LISTENER_USER],
        tls_ca_path=tls_broker.pki.ca,
    )
    with Store.open(tls_broker.broker.folder / "session.duckdb") as scratch:
        session = MqttConsumer(scratch, options, make_batch_writer(key=b"k" * 32), on_log=print)
        session.connect()
        session.close()
    pings = [
        (f"pontual/avl/opA/{vehicle}", json.dumps(body).encode())
        for vehicle, body in (
            ("1042", {"event_at": T0, "lat": -29.1712, "lon": -51.52, "speed_m_s": 5.0}),
            ("1042", {"event_at": T0 + 10, "lat": -29.1720, "lon": -51.521}),
            ("1043", {"event_at": T0, "lat": -29.18, "lon": -51.53}),
        )
    ]
    assert publish_over_tls(tls_broker, pings) == [0, 0, 0]
    assert _listen(store_path, tls_broker, "--tls-ca", str(tls_broker.pki.ca)) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"conectado a 127.0.0.1:{tls_broker.tls_port} (sessão retomada)" in out
    assert "3 mensagens" in out and "3 aceitas" in out
    with Store.open(store_path, read_only=True) as store:
        rows = store.query(
            "SELECT vehicle_id, operator_id, epoch(event_at)::BIGINT, lat, source "
            "FROM vehicle_locations ORDER BY vehicle_id, event_at"
        ).rows()
    assert rows == [
        ("1042", "opA", T0, -29.1712, "pontual/avl/opA/1042"),
        ("1042", "opA", T0 + 10, -29.172, "pontual/avl/opA/1042"),
        ("1043", "opA", T0, -29.18, "pontual/avl/opA/1043"),
    ]


def test_a_listener_without_the_ca_gets_a_clear_error(
    tls_broker: TlsBroker, store_path: Path, capsys
) -> None:
    # Plain MQTT to the TLS port: the broker drops the connection.
    assert _listen(store_path, tls_broker) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "o broker MQTT fechou a conexão antes de responder" in err
    assert f"onde: 127.0.0.1:{tls_broker.tls_port}" in err
    assert "se a porta é de um listener TLS, dê --tls-ca" in err
    assert "Traceback" not in err
    # TLS trusting another CA: the broker's certificate does not verify.
    other = build_pki(tls_broker.broker.folder.parent / "other-pki", name="Some other CA")
    assert _listen(store_path, tls_broker, "--tls-ca", str(other.ca)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "não foi possível alcançar o broker MQTT" in err and "certificate verify failed" in err
    assert "deve ser assinado pela AC de --tls-ca" in err
    assert "Traceback" not in err
