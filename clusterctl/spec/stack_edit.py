"""Edits of a stack file that keep its comments and layout (`clusterctl users add/remove`): text
in, text out. The caller validates the result before writing it."""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from clusterctl.errors import UserError
from clusterctl.spec.model import CONFIG_KEY


def _yaml() -> YAML:
    y = YAML()  # round-trip: comments, order and quoting stay as the user wrote them
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096
    return y


def _load(text: str) -> tuple[YAML, Any, CommentedMap]:
    y = _yaml()
    doc = y.load(text)
    cluster = (doc or {}).get("config", {}).get(CONFIG_KEY)
    if not isinstance(cluster, CommentedMap):
        raise UserError(f"the stack file has no {CONFIG_KEY} mapping under config")
    return y, doc, cluster


def _dump(y: YAML, doc: Any) -> str:
    buf = io.StringIO()
    y.dump(doc, buf)
    return buf.getvalue()


def add_user(text: str, user: dict[str, Any]) -> str:
    """`user` in the stack's own keys (name, uid, account, sshPublicKeys, admin)."""
    y, doc, cluster = _load(text)
    users = cluster.get("users")
    if users is None:
        users = CommentedSeq()
        cluster["users"] = users
    if any(isinstance(u, dict) and u.get("name") == user["name"] for u in users):
        raise UserError(
            f"users: '{user['name']}' is in the stack already; remove them first to change them"
        )
    entry = CommentedMap()
    for key in ("name", "uid", "account", "admin", "sshPublicKeys"):
        if key in user:
            value = user[key]
            entry[key] = CommentedSeq(value) if isinstance(value, list) else value
    users.append(entry)
    return _dump(y, doc)


def remove_user(text: str, name: str) -> str:
    y, doc, cluster = _load(text)
    users = cluster.get("users") or []
    keep = [u for u in users if not (isinstance(u, dict) and u.get("name") == name)]
    if len(keep) == len(users):
        names = ", ".join(str(u.get("name")) for u in users if isinstance(u, dict)) or "none"
        raise UserError(f"users: no user '{name}' in the stack (it has: {names})")
    for i in reversed(range(len(users))):
        if isinstance(users[i], dict) and users[i].get("name") == name:
            del users[i]
    return _dump(y, doc)
