"""The Microsoft apt repository key, carried in the user-data instead of fetched at boot.

cloud-init's `keyid:` asked a keyserver (HKP, port 11371, often closed by firewalls and landing
zones) at every first boot, trusting whatever it answered for a 160-bit id. The key is instead the
published file (https://packages.microsoft.com/keys/microsoft.asc, fetched over HTTPS) kept in
config/keys/, and every render checks its OpenPGP v4 fingerprint against the one pinned in
config/versions.yaml (nodePackages.slurm.aptKey): a swapped or damaged file stops the render.
"""

from __future__ import annotations

import base64
import hashlib

from clusterctl.project import config_dir
from clusterctl.spec.catalog import Catalog


class AptKeyError(LookupError):
    pass


def _armored_body(text: str) -> bytes:
    """The packets of an ASCII-armored block (RFC 4880 section 6.2): headers, blank line, base64,
    `=` CRC line."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    if not lines or lines[0] != "-----BEGIN PGP PUBLIC KEY BLOCK-----":
        raise AptKeyError("not an ASCII-armored public key block")
    body: list[str] = []
    in_body = False
    for line in lines[1:]:
        if line.startswith("-----END "):
            break
        if not in_body:
            in_body = line == ""
            continue
        if line.startswith("="):
            break
        body.append(line)
    return base64.b64decode("".join(body))


def fingerprint(armored: str) -> str:
    """The v4 fingerprint of the block's primary key: SHA-1 over 0x99, the two-byte length and
    the public-key packet's body (RFC 4880 section 12.2)."""
    data = _armored_body(armored)
    tag = data[0]
    if tag & 0x40:  # new-format header
        if (tag & 0x3F) != 6:
            raise AptKeyError("the first packet is not a public key")
        first = data[1]
        if first < 192:
            length, start = first, 2
        elif first < 224:
            length, start = ((first - 192) << 8) + data[2] + 192, 3
        else:
            length, start = int.from_bytes(data[2:6], "big"), 6
    else:
        if ((tag >> 2) & 0x0F) != 6:
            raise AptKeyError("the first packet is not a public key")
        size = {0: 1, 1: 2, 2: 4}[tag & 0x03]
        length, start = int.from_bytes(data[1 : 1 + size], "big"), 1 + size
    packet = data[start : start + length]
    if not packet or packet[0] != 4:
        raise AptKeyError("not a version 4 key")
    return hashlib.sha1(b"\x99" + length.to_bytes(2, "big") + packet).hexdigest().upper()


def microsoft_apt_key(cat: Catalog) -> str:
    """The armored key the user-data installs for the Slurm repository, checked."""
    try:
        pin = cat.versions["nodePackages"]["slurm"]["aptKey"]
        path = config_dir() / str(pin["file"])
        want = str(pin["fingerprint"]).replace(" ", "").upper()
    except (KeyError, TypeError) as exc:
        raise AptKeyError(
            f"config/versions.yaml nodePackages.slurm.aptKey: missing {exc}"
        ) from None
    text = path.read_text()
    got = fingerprint(text)
    if got != want:
        raise AptKeyError(
            f"{path}: fingerprint {got}, but nodePackages.slurm.aptKey pins {want}; "
            f"fetch {pin.get('url')} again and compare with `gpg --show-keys`"
        )
    return text.strip() + "\n"
