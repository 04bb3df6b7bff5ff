"""``kubedra validate -f FILE``: check manifests offline as the API server would on create.

Each object goes through what a create does: kind lookup, strict field checking (unknown
and duplicate fields, as kubectl's default ``--validate=strict``), decoding, defaulting, the
parts of the create strategy validation depends on (namespace, generated name, a Job's
generated selector) and create validation. Problems are printed the way kubectl prints the
API server's answer; the exit status is 1 if any object is not valid.
"""

from __future__ import annotations

import random
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from kubedra.api import codec
from kubedra.api.batch import Job
from kubedra.api.features import FeatureGateError, FeatureGates, parse_feature_gates
from kubedra.api.meta import TypedObject
from kubedra.validation.field import FieldError
from kubedra.validation.registry import rules_for

MANIFEST_SUFFIXES = (".json", ".yaml", ".yml")
# apiserver's SimpleNameGenerator: at most 58 characters of the base plus 5 random ones.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_BASE = 58


@dataclass(frozen=True, slots=True)
class Source:
    """Manifest text and where it came from (a path, or ``STDIN``)."""

    name: str
    text: bytes


def _sources(filenames: tuple[str, ...], recursive: bool) -> Iterator[Source]:
    for filename in filenames:
        if filename == "-":
            yield Source("STDIN", sys.stdin.buffer.read())
            continue
        path = Path(filename)
        if path.is_dir():
            pattern = "**/*" if recursive else "*"
            for child in sorted(path.glob(pattern)):
                if child.is_file() and child.suffix in MANIFEST_SUFFIXES:
                    yield Source(str(child), child.read_bytes())
        elif path.exists():
            yield Source(filename, path.read_bytes())
        else:
            raise click.ClickException(f'the path "{filename}" does not exist')


def invalid_message(kind: str, name: str, errors: list[FieldError]) -> str:
    """kubectl's rendering of a 422: one cause inline, several as a bulleted list."""
    causes: list[str] = []
    for err in errors:
        text = f"{err.field}: {err.body()}"
        if text not in causes:
            causes.append(text)
    head = f'The {kind} "{name}" is invalid: '
    if len(causes) == 1:
        return head + causes[0] + "\n"
    return head + "\n" + "".join(f"* {c}\n" for c in causes)


def _cannot_handle(raw: dict[str, Any], reason: str) -> str:
    api_version = raw.get("apiVersion", "")
    version = api_version.rpartition("/")[2] if isinstance(api_version, str) else ""
    kind = raw.get("kind")
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {reason}'


def _within(paths: list[str], prefix: str) -> list[str]:
    """The paths under ``prefix`` (an object's place in a List), relative to it."""
    if not prefix:
        return paths
    return [p[len(prefix) + 1:] for p in paths if p.startswith(prefix + ".")]


def _generated_name(base: str) -> str:
    suffix = "".join(random.choice(_NAME_ALPHABET) for _ in range(5))
    return base[:_MAX_GENERATED_BASE] + suffix


class Checker:
    """Validates objects one at a time, printing a line (or block) for each."""

    def __init__(self, namespace: str, gates: FeatureGates, mode: str) -> None:
        self.namespace = namespace
        self.gates = gates
        self.mode = mode
        self.failed = False

    def _fail(self, message: str) -> None:
        self.failed = True
        click.echo(message, nl=not message.endswith("\n"), err=True)

    def check_source(self, source: Source) -> None:
        try:
            docs = codec.load_documents(source.text)
        except codec.DecodeError as err:
            self._fail(f"error: error parsing {source.name}: {err}")
            return
        duplicates = self._duplicates(source, docs)
        for index, path, obj in codec.list_items(docs):
            self.check(source.name, obj, _within(duplicates[index], path))

    def _duplicates(self, source: Source, docs: list[Any]) -> list[list[str]]:
        """Repeated keys per document (loading keeps only the last value of each)."""
        if len(docs) == 1 and source.text.lstrip()[:1] == b"{":
            return [codec.duplicate_fields(source.text)]
        found = codec.yaml_duplicate_fields(source.text)
        return found if len(found) == len(docs) else [[] for _ in docs]

    def check(self, where: str, raw: Any, duplicates: list[str]) -> None:
        if not isinstance(raw, dict):
            self._fail(f"error: {where}: expected an object, got {type(raw).__name__}")
            return
        try:
            kind = codec.kind_of(raw)
        except codec.DecodeError as err:
            self._fail(f"error: {where}: {err}")
            return
        strict = [f'unknown field "{p}"' for p in codec.unknown_fields(raw, kind.model)]
        strict += [f'duplicate field "{p}"' for p in duplicates]
        if strict and self.mode == "strict":
            reason = "strict decoding error: " + ", ".join(strict)
            self._fail(f"error: {where}: {_cannot_handle(raw, reason)}")
            return
        if self.mode == "warn":
            for warning in strict:
                click.echo(f"Warning: {warning}", err=True)
        try:
            obj = codec.decode(raw, kind.model)
        except codec.DecodeError as err:
            self._fail(f"error: {where}: {_cannot_handle(raw, str(err))}")
            return
        self._prepare(obj, kind.namespaced)
        rules = rules_for(kind.group, kind.kind)
        errors: list[FieldError] = []
        if rules is not None:
            if rules.default is not None:
                rules.default(obj, self.gates)
            errors = rules.validate(obj, self.gates)
        name = obj.metadata.name or ""
        if errors:
            self._fail(invalid_message(kind.kind, name, errors))
        else:
            click.echo(f"{kind.kind}/{name} valid")

    def _prepare(self, obj: TypedObject, namespaced: bool) -> None:
        """What the request path and create strategy do before validation."""
        meta = obj.metadata
        if namespaced:
            meta.namespace = meta.namespace or self.namespace
        else:
            meta.namespace = None
        if not meta.name and meta.generate_name:
            meta.name = _generated_name(meta.generate_name)
        # FillObjectMetaSystemFields
        meta.uid = str(uuid.uuid4())
        meta.creation_timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if isinstance(obj, Job) and not obj.spec.manual_selector:
            from kubedra.apiserver.strategies.job import generate_selector

            generate_selector(obj)


@click.command()
@click.option("-f", "--filename", "filenames", multiple=True, required=True,
              help="A manifest file (YAML or JSON, several documents allowed), a directory of "
                   "them, or - for standard input. Repeatable.")
@click.option("-R", "--recursive", is_flag=True, help="Descend into subdirectories of -f dirs.")
@click.option("-n", "--namespace", default="default", show_default=True,
              help="Namespace for namespaced objects that name none.")
@click.option("--validate", "mode", type=click.Choice(["strict", "warn", "ignore"]),
              default="strict", show_default=True,
              help="Unknown or duplicate fields: an error, a warning, or ignored (as kubectl).")
@click.option("--feature-gates", default="", help="Gates as A=true,B=false.")
def validate(
    filenames: tuple[str, ...], recursive: bool, namespace: str, mode: str, feature_gates: str
) -> None:
    """Validate manifests offline as the API server validates a create."""
    try:
        gates = parse_feature_gates(feature_gates)
    except FeatureGateError as err:
        raise click.BadParameter(str(err), param_hint="--feature-gates") from None
    checker = Checker(namespace, gates, mode)
    for source in _sources(filenames, recursive):
        checker.check_source(source)
    if checker.failed:
        sys.exit(1)
