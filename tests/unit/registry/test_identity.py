"""New objects' uids and the audit IDs: version 4 UUIDs, as ``uuid.uuid4()`` prints them;
generated names' random suffixes."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from kubedra.apiserver.audit import new_audit_id
from kubedra.registry.identity import _NAME_ALPHABET, generate_name, new_uid, uuid4_text


@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_uuid4_text_is_what_uuid_prints(bits: int) -> None:
    assert uuid4_text(bits) == str(uuid.UUID(int=bits & ~((0xF << 76) | (0x3 << 62))
                                             | (0x4 << 76) | (0x2 << 62)))
    assert uuid.UUID(uuid4_text(bits)).version == 4


def test_uids_and_audit_ids_are_distinct_version_4_uuids() -> None:
    for make in (new_uid, new_audit_id):
        made = [make() for _ in range(3000)]  # past a 256-uid pool more than once
        assert len(set(made)) == len(made)
        for text in made:
            parsed = uuid.UUID(text)
            assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)


def test_generated_names_draw_every_character_at_every_position() -> None:
    names = [generate_name("p" * 70) for _ in range(3000)]
    assert all(len(n) == 63 and n.startswith("p" * 58) for n in names)
    for position in range(58, 63):  # 3000 draws of 27 letters: each one seen, none dominant
        counts = {ch: 0 for ch in _NAME_ALPHABET}
        for n in names:
            counts[n[position]] += 1
        assert min(counts.values()) > 40 and max(counts.values()) < 200
