"""TLS for the agent stream: the operator's certificate, or a CA and server certificate generated
into <data_dir>/tls/ on first start (kubeadm-style: agents pin the CA by its SHA-256)."""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ctxbench_server.config import Settings

CA_DAYS = 3650
SERVER_DAYS = 825
# A server certificate this close to its end is renewed at start.
RENEW_BEFORE = dt.timedelta(days=30)
WILDCARD_HOSTS = {"", "0.0.0.0", "::", "[::]"}


@dataclass(frozen=True)
class TlsMaterial:
    cert_chain_pem: bytes  # server certificate, then the CA
    key_pem: bytes
    ca_path: Path | None  # None: the operator's certificate without a CA in its chain
    ca_fingerprint: str  # "sha256:<hex>" of the CA certificate's DER, or ""


def fingerprint(cert: x509.Certificate) -> str:
    return "sha256:" + hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def split_hostport(addr: str) -> tuple[str, str]:
    addr = addr.strip()
    if addr.startswith("["):
        host, _, rest = addr[1:].partition("]")
        return host, rest.removeprefix(":")
    if addr.count(":") == 1:
        host, _, port = addr.partition(":")
        return host, port
    return addr, ""  # a bare host, or a bare IPv6 address


def public_grpc_addresses(s: Settings, port: int) -> list[str]:
    given = [a.strip() for a in s.public_grpc_address.split(",") if a.strip()]
    if given:
        return given
    host = s.grpc_host if s.grpc_host not in WILDCARD_HOSTS else "127.0.0.1"
    return [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]


def wanted_sans(s: Settings) -> set[str]:
    sans = {"localhost", "127.0.0.1", "::1"}
    if s.grpc_host not in WILDCARD_HOSTS:
        sans.add(s.grpc_host.strip("[]"))
    for addr in s.public_grpc_address.split(","):
        if addr.strip():
            sans.add(split_hostport(addr)[0])
    return {x for x in sans if x}


def _san_entries(names: set[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for n in sorted(names):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            out.append(x509.DNSName(n))
    return out


def _cert_sans(cert: x509.Certificate) -> set[str]:
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(v) for v in ext.get_values_for_type(x509.DNSName)} | {
        str(v) for v in ext.get_values_for_type(x509.IPAddress)
    }


def _write_private(path: Path, data: bytes) -> None:
    """Writes a file 0600, atomically (a crash leaves the old file or the new, never half of one)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _new_ca(tls_dir: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ctxbench agent-stream CA")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_private(tls_dir / "ca-key.pem", _key_pem(key))
    _write_private(tls_dir / "ca.pem", cert.public_bytes(serialization.Encoding.PEM))
    (tls_dir / "ca.pem").chmod(0o644)
    return cert, key


def _new_server(
    tls_dir: Path, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, sans: set[str]
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ctxbench server")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(min(now + dt.timedelta(days=SERVER_DAYS), ca.not_valid_after_utc))
        .add_extension(x509.SubjectAlternativeName(_san_entries(sans)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write_private(tls_dir / "server-key.pem", _key_pem(key))
    _write_private(tls_dir / "server.pem", cert.public_bytes(serialization.Encoding.PEM))


def _load_chain(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)


def ensure_tls(s: Settings) -> TlsMaterial:
    """The certificate and key the gRPC port serves. Generates what is missing or stale."""
    if s.grpc_tls_cert is not None and s.grpc_tls_key is not None:
        chain_pem = s.grpc_tls_cert.read_bytes()
        chain = _load_chain(chain_pem)
        top = chain[-1]
        ca_fp = fingerprint(top) if len(chain) > 1 or top.issuer == top.subject else ""
        return TlsMaterial(chain_pem, s.grpc_tls_key.read_bytes(), None, ca_fp)

    d = s.tls_dir
    d.mkdir(parents=True, exist_ok=True)
    d.chmod(0o700)
    ca_path, ca_key_path = d / "ca.pem", d / "ca-key.pem"
    if ca_path.exists() and ca_key_path.exists():
        ca = x509.load_pem_x509_certificate(ca_path.read_bytes())
        loaded = serialization.load_pem_private_key(ca_key_path.read_bytes(), None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{ca_key_path}: not an ECDSA key")
        ca_key = loaded
    else:
        ca, ca_key = _new_ca(d)

    sans = wanted_sans(s)
    srv_path, srv_key_path = d / "server.pem", d / "server-key.pem"
    fresh = False
    if srv_path.exists() and srv_key_path.exists():
        cur = x509.load_pem_x509_certificate(srv_path.read_bytes())
        fresh = (
            cur.issuer == ca.subject
            and _cert_sans(cur) == sans
            and cur.not_valid_after_utc - dt.datetime.now(dt.UTC) > RENEW_BEFORE
        )
        if fresh:
            try:
                cur.verify_directly_issued_by(ca)
            except (ValueError, TypeError, Exception):
                fresh = False
    if not fresh:
        _new_server(d, ca, ca_key, sans)
    chain_pem = srv_path.read_bytes() + ca.public_bytes(serialization.Encoding.PEM)
    return TlsMaterial(chain_pem, srv_key_path.read_bytes(), ca_path, fingerprint(ca))
