"""ObjectMeta validation and the name helpers: upstream texts, paths and order."""

from __future__ import annotations

from kubedra.api.meta import ManagedFieldsEntry, ObjectMeta, OwnerReference
from kubedra.validation import names
from kubedra.validation.field import ErrorType, Path
from kubedra.validation.meta import (
    validate_annotations,
    validate_immutable_field,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
    validate_template_object_meta,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def summary(errors: list) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    return [(e.type.value, str(e.field), e.detail) for e in errors]


def test_dns_subdomain_messages() -> None:
    assert names.is_dns1123_subdomain("example.com") == []
    assert names.is_dns1123_subdomain("Example") == [SUBDOMAIN_MSG]
    assert names.is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert names.is_dns1123_subdomain("-" * 254) == [
        "must be no more than 253 characters",
        SUBDOMAIN_MSG,
    ]
    # Go's $ only matches at the very end; \d is ASCII.
    assert names.is_dns1123_subdomain("abc\n") == [SUBDOMAIN_MSG]
    assert names.is_dns1123_subdomain("\u0661\u0662\u0663") == [SUBDOMAIN_MSG]


def test_dns_label_messages() -> None:
    assert names.is_dns1123_label("my-name") == []
    assert names.is_dns1123_label("a.b") == ["must not contain dots"]
    assert names.is_dns1123_label("A") == [LABEL_MSG]
    assert names.is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]


def test_lengths_are_bytes() -> None:
    # 32 two-byte characters are 64 bytes: too long for a label value.
    assert "must be no more than 63 characters" in names.is_valid_label_value("é" * 32)


def test_qualified_name() -> None:
    assert names.is_qualified_name("example.com/name") == []
    assert names.is_qualified_name("/name") == ["prefix part must be non-empty"]
    errs = names.is_qualified_name("example.com/")
    assert errs[0] == "name part must be non-empty"
    assert errs[1].startswith("name part must consist of alphanumeric characters")
    assert names.is_qualified_name("a/b/c")[0].startswith("a qualified name must consist of")
    assert names.is_qualified_name("a/b/c")[0].endswith(
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )
    assert names.is_qualified_name("Bad_/x") == ["prefix part " + SUBDOMAIN_MSG]


def test_generate_name_prefix_masks_trailing_dash() -> None:
    assert names.name_is_dns_subdomain("pod-", True) == []
    assert names.name_is_dns_subdomain("pod-", False) == [SUBDOMAIN_MSG]


def test_object_meta_order_and_paths() -> None:
    meta = ObjectMeta(
        name="Bad",
        generate_name="Bad-",
        namespace="a.b",
        generation=-1,
        labels={"k": "bad value"},
        annotations={"bad key!": "v"},
        finalizers=["orphan", "foregroundDeletion"],
        owner_references=[OwnerReference(api_version="v1", kind="Event", name="e", uid="1")],
        managed_fields=[ManagedFieldsEntry(operation="Bogus", fields_type="X", manager="m\x07")],
    )
    got = [
        (t, f) for t, f, _ in summary(validate_object_meta(meta, True, names.name_is_dns_subdomain))
    ]
    assert got == [
        ("FieldValueInvalid", "metadata.generateName"),
        ("FieldValueInvalid", "metadata.name"),
        ("FieldValueInvalid", "metadata.namespace"),
        ("FieldValueInvalid", "metadata.generation"),
        ("FieldValueInvalid", "metadata.labels"),
        ("FieldValueInvalid", "metadata.annotations"),
        ("FieldValueInvalid", "metadata.ownerReferences"),
        ("FieldValueInvalid", "metadata.finalizers"),
        ("FieldValueInvalid", "metadata.managedFields[0].operation"),
        ("FieldValueInvalid", "metadata.managedFields[0].fieldsType"),
        ("FieldValueInvalid", "metadata.managedFields[0].manager"),
    ]
    errs = validate_object_meta(meta, True, names.name_is_dns_subdomain)
    by_field = {str(e.field): e for e in errs}
    assert by_field["metadata.namespace"].detail == "must not contain dots"
    assert by_field["metadata.generation"].detail == "must be greater than or equal to 0"
    assert by_field["metadata.ownerReferences"].detail == (
        "/v1, Kind=Event is disallowed from being an owner"
    )
    assert by_field["metadata.finalizers"].detail == (
        "finalizer orphan and foregroundDeletion cannot be both set"
    )
    assert by_field["metadata.managedFields[0].manager"].detail == (
        "invalid character U+0007 (at position 1)"
    )


def test_object_meta_required_and_forbidden() -> None:
    errs = validate_object_meta(ObjectMeta(), True, names.name_is_dns_subdomain)
    assert summary(errs) == [
        ("FieldValueRequired", "metadata.name", "name or generateName is required"),
        ("FieldValueRequired", "metadata.namespace", ""),
    ]
    assert str(errs[1]) == "metadata.namespace: Required value"
    errs = validate_object_meta(
        ObjectMeta(name="x", namespace="ns"), False, names.name_is_dns_subdomain
    )
    assert summary(errs) == [
        ("FieldValueForbidden", "metadata.namespace", "not allowed on this type")
    ]


def test_owner_references() -> None:
    refs = [
        OwnerReference(api_version="", kind="", name="", uid=""),
        OwnerReference(api_version="apps/v1", kind="A", name="a", uid="1", controller=True),
        OwnerReference(api_version="apps/v1", kind="B", name="b", uid="2", controller=True),
    ]
    errs = validate_object_meta(
        ObjectMeta(name="x", owner_references=refs), False, names.name_is_dns_subdomain
    )
    assert summary(errs) == [
        ("FieldValueInvalid", "metadata.ownerReferences.apiVersion", "version must not be empty"),
        ("FieldValueInvalid", "metadata.ownerReferences.kind", "kind must not be empty"),
        ("FieldValueInvalid", "metadata.ownerReferences.name", "name must not be empty"),
        ("FieldValueInvalid", "metadata.ownerReferences.uid", "uid must not be empty"),
        (
            "FieldValueInvalid",
            "metadata.ownerReferences",
            'Only one reference can have Controller set to true. Found "true" in references for '
            "A/a and B/b",
        ),
    ]


def test_annotations_size_limit() -> None:
    errs = validate_annotations({"a": "x" * (256 * 1024)}, Path("metadata.annotations"))
    assert [(e.type, e.detail) for e in errs] == [
        (ErrorType.TOO_LONG, "must have at most 262144 bytes")
    ]
    assert validate_annotations({"a": "x" * (256 * 1024 - 1)}, Path("a")) == []
    # Annotation keys are checked case-insensitively.
    assert validate_annotations({"Example.COM/Key": "v"}, Path("a")) == []


def test_labels_key_and_value() -> None:
    errs = validate_labels({"bad key": "ok", "k": "-bad"}, Path("metadata.labels"))
    assert [e.bad_value for e in errs] == ["bad key", "-bad"]


def test_map_errors_come_in_key_order() -> None:
    """Go walks a map in random order; we sort its keys (docs/deviations.md)."""
    labels = validate_labels({"z z": "v", "m": "-bad", "a a": "v"}, Path("metadata.labels"))
    assert [e.bad_value for e in labels] == ["a a", "-bad", "z z"]
    notes = validate_annotations({"z/x/y": "v", "a/x/y": "v"}, Path("metadata.annotations"))
    assert [e.bad_value for e in notes] == ["a/x/y", "z/x/y"]


def test_update_rules() -> None:
    old = ObjectMeta(
        name="a",
        namespace="ns",
        uid="u1",
        resource_version="1",
        generation=3,
        creation_timestamp="2024-01-01T00:00:00Z",
    )
    new = ObjectMeta(
        name="b",
        namespace="ns2",
        uid="u2",
        generation=2,
        creation_timestamp="2024-01-02T00:00:00Z",
        deletion_timestamp="2024-01-03T00:00:00Z",
        deletion_grace_period_seconds=5,
    )
    assert summary(validate_object_meta_update(new, old)) == [
        ("FieldValueInvalid", "metadata.resourceVersion", "must be specified for an update"),
        ("FieldValueInvalid", "metadata.generation", "must not be decremented"),
        ("FieldValueInvalid", "metadata.name", "field is immutable"),
        ("FieldValueInvalid", "metadata.namespace", "field is immutable"),
        ("FieldValueInvalid", "metadata.uid", "field is immutable"),
        ("FieldValueInvalid", "metadata.creationTimestamp", "field is immutable"),
        ("FieldValueInvalid", "metadata.deletionTimestamp", "field is immutable"),
        ("FieldValueInvalid", "metadata.deletionGracePeriodSeconds", "field is immutable"),
    ]
    err = validate_object_meta_update(new, old)[0]
    assert (
        str(err) == 'metadata.resourceVersion: Invalid value: "": must be specified for an update'
    )
    rendered = [str(e) for e in validate_object_meta_update(new, old)]
    assert rendered[5] == ("metadata.creationTimestamp: Invalid value: 2024-01-02 00:00:00 +0000 "
                           "UTC: field is immutable")
    assert rendered[6] == ("metadata.deletionTimestamp: Invalid value: 2024-01-03 00:00:00 +0000 "
                           "UTC: field is immutable")


def test_timestamps_compare_as_instants() -> None:
    old = ObjectMeta(name="a", resource_version="1", creation_timestamp="2024-01-01T00:00:00Z")
    same = ObjectMeta(name="a", resource_version="1",
                      creation_timestamp="2024-01-01T01:00:00+01:00")
    assert validate_object_meta_update(same, old) == []
    cleared = ObjectMeta(name="a", resource_version="1")
    assert [str(e) for e in validate_object_meta_update(cleared, old)] == [
        "metadata.creationTimestamp: Invalid value: 0001-01-01 00:00:00 +0000 UTC: "
        "field is immutable"]
    deleting = ObjectMeta(name="a", resource_version="1", creation_timestamp="2024-01-01T00:00:00Z",
                          deletion_timestamp="2024-01-02T00:00:00Z")
    assert [str(e) for e in validate_object_meta_update(old, deleting)] == [
        'metadata.deletionTimestamp: Invalid value: "null": field is immutable']


def test_no_new_finalizers_while_deleting() -> None:
    old = ObjectMeta(
        name="a",
        resource_version="1",
        finalizers=["a/x"],
        deletion_timestamp="2024-01-01T00:00:00Z",
    )
    new = ObjectMeta(
        name="a",
        resource_version="1",
        finalizers=["a/x", "b/y", "a/z"],
        deletion_timestamp="2024-01-01T00:00:00Z",
    )
    errs = validate_object_meta_update(new, old)
    assert summary(errs) == [
        (
            "FieldValueForbidden",
            "metadata.finalizers",
            "no new finalizers can be added if the object is being deleted, found new finalizers "
            '[]string{"a/z", "b/y"}',
        )
    ]


def test_immutable_field_semantic_equality() -> None:
    assert validate_immutable_field(None, [], Path("x")) == []
    assert validate_immutable_field({}, None, Path("x")) == []
    assert validate_immutable_field(True, 1, Path("x")) != []
    assert validate_immutable_field("a", "b", Path("x"))[0].bad_value == "a"


def test_template_object_meta() -> None:
    meta = ObjectMeta(name="n", uid="u", labels={"a": "b"}, finalizers=[], generation=0)
    assert summary(validate_template_object_meta(meta, Path("spec.metadata"))) == [
        ("FieldValueForbidden", "spec.metadata.name", "cannot be set"),
        ("FieldValueForbidden", "spec.metadata.uID", "cannot be set"),
        ("FieldValueForbidden", "spec.metadata.finalizers", "cannot be set"),
    ]
    assert validate_template_object_meta(ObjectMeta(annotations={"a": "b"}), Path("m")) == []


def test_remembered_names_answer_as_the_first_check() -> None:
    """Valid names are remembered; each answer is a fresh list, and invalid ones are
    checked (and reported) every time."""
    is_qualified_name = names.is_qualified_name
    assert is_qualified_name("example.com/key") == [] == is_qualified_name("example.com/key")
    is_qualified_name("example.com/key").append("changed by a caller")
    assert is_qualified_name("example.com/key") == []
    first = is_qualified_name("a/b/c")
    first.clear()
    assert is_qualified_name("a/b/c") != [] and len(is_qualified_name("-bad")) == 1
