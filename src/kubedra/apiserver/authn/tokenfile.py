"""Static bearer tokens: ``--token-auth-file`` in kube-apiserver's CSV format,
``token,user,uid,"group1,group2"``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from kubedra.apiserver.auth import User


class AuthFileError(ValueError):
    """A token file line that cannot be used."""


def parse_token_file(text: str) -> dict[str, User]:
    """One user per line (blank lines and ``#`` comments skipped); a token given twice is
    refused, as it could only authenticate one of its users."""
    users: dict[str, User] = {}
    for n, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not row[0].strip() or row[0].lstrip().startswith("#"):
            continue
        if len(row) < 3:
            raise AuthFileError(f"token file line {n}: must have at least 3 columns (token, "
                                f"user name, user uid), found {len(row)}")
        token, name, uid = row[0].strip(), row[1].strip(), row[2].strip()
        if token in users:
            raise AuthFileError(f"token file line {n}: duplicate token")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        users[token] = User(name, groups, uid)
    return users


def load_token_file(path: Path) -> dict[str, User]:
    return parse_token_file(path.read_text())
