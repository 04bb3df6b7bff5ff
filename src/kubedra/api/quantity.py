"""Kubernetes ``resource.Quantity`` with apimachinery v0.30.0 semantics.

Why our own type: no Python package parses like ``resource.ParseQuantity`` (nano round-up away
from zero, BinarySI cap at 2^63-1, strict syntax) or re-serializes in canonical form.

Upstream keeps either an ``int64Amount`` (value, scale) or an ``inf.Dec`` (unscaled, scale); the
CEL library's ``isInteger``/``asInteger``/``asApproximateFloat`` depend on which one is used, so
this class tracks the same representation (``_v`` unscaled int, ``_e`` base-10 exponent,
``_dec`` whether it is the big-decimal form). Equality, ordering and hashing are by value.
``str(q)`` is ``Quantity.String()``: the string given to the parser when the fast path deemed it
canonical (so ``+1`` stays ``+1``, as upstream's JSON does), else the canonical form.

JSON decoding should use :meth:`Quantity.unmarshal` (trims whitespace like ``UnmarshalJSON``);
:meth:`Quantity.parse` is ``ParseQuantity`` and rejects surrounding whitespace.
"""

from __future__ import annotations

from typing import Final, Literal

Format = Literal["DecimalExponent", "BinarySI", "DecimalSI"]
DECIMAL_EXPONENT: Final = "DecimalExponent"
BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"

SPLIT_RE_STRING: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG: Final = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"

_INT64_MAX: Final = (1 << 63) - 1
_INT64_MIN: Final = -(1 << 63)
_NANO: Final = -9
_RESCALE_LIMIT: Final = 64
# Deviation guards (docs/deviations.md): digits accepted by the parser, and the largest
# exponent gap / result size of add/sub. They keep every operation well below Python's
# 4300-digit int<->str limit and in microseconds; upstream has no such bounds.
MAX_DIGITS: Final = 2000
MAX_ALIGN: Final = 1000
_MAX_BITS: Final = 10_000
ERR_ARITH_RANGE: Final = "quantity arithmetic result out of range"
_DIGITS: Final = frozenset("0123456789")
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")

# suffix -> (base, exponent, format); the decimal table also maps exponent -> suffix.
_DEC_SUFFIXES: Final = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BIN_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_BY_EXP: Final = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_BY_EXP: Final = {e: s for s, e in _BIN_SUFFIXES.items()} | {0: ""}

# Go's math.Pow10 tables (asApproximateFloat must match its rounding bit for bit).
_POW10: Final = tuple(float(f"1e{i}") for i in range(32))
_POW10_POS32: Final = tuple(float(f"1e{32 * i}") for i in range(10))
_POW10_NEG32: Final = tuple(float(f"1e-{32 * i}") for i in range(11))


class QuantityError(ValueError):
    """A ``resource.ParseQuantity`` / conversion error; ``str(e)`` is the upstream text."""


def _int32(x: int) -> int:
    """Go ``int32(x)`` (two's complement wrap)."""
    return ((x + (1 << 31)) % (1 << 32)) - (1 << 31)


def _int64_fits(x: int) -> bool:
    return _INT64_MIN <= x <= _INT64_MAX


def _scale_int64(value: int, scale: int) -> int | None:
    """``positiveScaleInt64``: value * 10^scale if it fits in int64 (scale >= 0)."""
    if value == 0 or scale == 0:
        return value
    if scale > 19:
        return None
    r = value * 10**scale
    return r if _int64_fits(r) else None


def _go_pow10(n: int) -> float:
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10[n % 32]
    if -323 <= n <= 0:
        return _POW10_NEG32[-n // 32] / _POW10[-n % 32]
    return float("inf") if n > 0 else 0.0


def _split(s: str) -> tuple[bool, str, str, str]:
    """``parseQuantityString``: (positive, num, denom, suffix) or QuantityError."""
    positive = True
    pos, end = 0, len(s)
    if s[0] in "+-":
        positive = s[0] == "+"
        pos = 1
    while pos < end and s[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    num = s[start:pos] or "0"
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        start = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[start:pos]
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, s[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """``suffixHandler.interpret``: (base, exponent, format) or ErrSuffix."""
    exp = _DEC_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp, DECIMAL_SI
    exp = _BIN_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            parsed = int(digits)
            if _int64_fits(parsed):
                return 10, _int32(parsed), DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _strip_tens(v: int, e: int) -> tuple[int, int]:
    """Move factors of ten of ``v`` into the exponent (``removeInt64Factors``)."""
    if v == 0:
        return 0, e
    s = str(abs(v))
    stripped = s.rstrip("0")
    n = len(s) - len(stripped)
    if n:
        v = int(stripped) if v > 0 else -int(stripped)
    return v, e + n


class Quantity:
    """An immutable apimachinery Quantity (see module docstring)."""

    __slots__ = ("_dec", "_e", "_n", "_s", "_v", "format")

    _v: int
    _e: int
    _dec: bool
    format: Format
    _s: str
    _n: tuple[int, int] | None

    def __init__(self, value: int = 0, format: Format = DECIMAL_SI) -> None:
        """``resource.NewQuantity(value, format)`` (an int64 amount at scale 0)."""
        if not _int64_fits(value):
            raise QuantityError(f"quantity value {value} does not fit in int64")
        self._v, self._e, self._dec, self.format, self._s = value, 0, False, format, ""
        self._n = None

    @classmethod
    def _make(cls, v: int, e: int, dec: bool, fmt: Format, s: str = "") -> Quantity:
        q = cls.__new__(cls)
        q._v, q._e, q._dec, q.format, q._s = v, e, dec, fmt, s
        q._n = None
        return q

    # ----------------------------------------------------------------------------- parsing

    @classmethod
    def parse(cls, s: str) -> Quantity:
        """``resource.ParseQuantity``; raises QuantityError with the upstream text."""
        if not s:
            raise QuantityError(ERR_FORMAT_WRONG)
        if s == "0":
            return cls._make(0, 0, False, DECIMAL_SI, "0")
        positive, num, denom, suffix = _split(s)
        base, exponent, fmt = _interpret(suffix)
        if len(num) + len(denom) > MAX_DIGITS:
            raise QuantityError(ERR_NUMERIC)
        fast = cls._parse_fast(s, positive, num, denom, exponent, fmt)
        if fast is not None:
            return fast
        return cls._parse_slow(positive, num, denom, base, exponent, fmt)

    @classmethod
    def unmarshal(cls, s: str) -> Quantity:
        """``Quantity.UnmarshalJSON`` of a JSON string: surrounding whitespace is trimmed."""
        return cls.parse(s.strip(" \t\n\r\v\f\x85\xa0"))

    @classmethod
    def _parse_fast(
        cls, s: str, positive: bool, num: str, denom: str, exponent: int, fmt: Format
    ) -> Quantity | None:
        mantissa = 1
        scale = 0
        if fmt == BINARY_SI:
            if exponent >= 0 and not denom:
                mantissa = 1 << exponent
                precision = 15 - len(num) - (exponent * 3) // 10 - 1
            else:
                precision = -1
        else:
            scale = exponent
            precision = 18 - (len(num) + len(denom))
        if precision < 0:
            return None
        scale = _int32(scale - len(denom))
        if scale < _NANO:
            return None
        shifted = num + denom
        value = int(shifted)
        result = value * mantissa
        if not _int64_fits(result):
            return None
        if not positive:
            result = -result
        if fmt == BINARY_SI:
            canonical = exponent % 10 == 0 and value & 7 != 0
        else:
            canonical = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
        return cls._make(result, scale, False, fmt, s if canonical else "")

    @classmethod
    def _parse_slow(
        cls, positive: bool, num: str, denom: str, base: int, exponent: int, fmt: Format
    ) -> Quantity:
        v = int(num + denom)
        e = -len(denom)
        if base == 10:
            e = -_int32(len(denom) - exponent)
        else:
            v <<= exponent
        if v != 0 and e < _NANO:
            # round the magnitude up (away from zero) to nano precision; a value with fewer
            # digits than the shift is below 1n and becomes 1n (no huge power is built)
            shift = _NANO - e
            v = 1 if len(str(v)) <= shift else -(-v // 10**shift)
            e = _NANO
        elif v != 0 and e > _NANO and e - _NANO <= _RESCALE_LIMIT:
            # upstream rescales to 9 decimal places; for absurd exponents we keep the
            # representation (same value) instead of building a power of ten with 2^31 digits
            v *= 10 ** (e - _NANO)
            e = _NANO
        if fmt == BINARY_SI:
            if v * 10 ** max(e, 0) > _INT64_MAX * 10 ** max(-e, 0):
                v, e = _INT64_MAX, 0
            elif v != 0 and ((e >= 0 and v < 1) or (e < 0 and v < 10**-e)):
                fmt = DECIMAL_SI
        return cls._make(v if positive else -v, e, True, fmt)

    # ----------------------------------------------------------------------------- value

    def _normalized(self) -> tuple[int, int]:
        n = self._n
        if n is None:
            n = self._n = _strip_tens(self._v, self._e)
        return n

    def sign(self) -> int:
        return (self._v > 0) - (self._v < 0)

    def cmp(self, other: Quantity) -> int:
        """``Quantity.Cmp``: -1, 0 or 1, exact for any exponent without huge powers."""
        va, ea = self._normalized()
        vb, eb = other._normalized()
        if ea == eb:
            return (va > vb) - (va < vb)
        if abs(ea - eb) <= 40:  # small gap: align exactly
            lo = min(ea, eb)
            x, y = va * _pow10(ea - lo), vb * _pow10(eb - lo)
            return (x > y) - (x < y)
        sa, sb = (va > 0) - (va < 0), (vb > 0) - (vb < 0)
        if sa != sb or sa == 0:
            return (sa > sb) - (sa < sb)
        # same sign, far apart exponents: compare magnitudes by their adjusted exponents first
        ma, mb = abs(va), abs(vb)
        aa, ab = len(str(ma)) + ea, len(str(mb)) + eb
        if aa != ab:
            return sa if aa > ab else -sa
        lo = min(ea, eb)
        x, y = ma * _pow10(ea - lo), mb * _pow10(eb - lo)
        return sa * ((x > y) - (x < y))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._normalized() == other._normalized()

    def __hash__(self) -> int:
        return hash(self._normalized())

    def __lt__(self, other: Quantity) -> bool:
        return self.cmp(other) < 0

    def __le__(self, other: Quantity) -> bool:
        return self.cmp(other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        return self.cmp(other) > 0

    def __ge__(self, other: Quantity) -> bool:
        return self.cmp(other) >= 0

    def value_key(self) -> str:
        """A string that is equal for two quantities iff they are equal (``v`` ``e`` reduced)."""
        v, e = self._normalized()
        return f"{v}e{e}" if v else "0"

    @classmethod
    def from_value_key(cls, key: str) -> Quantity:
        """The representative of a :meth:`value_key`: an int64 amount when the reduced
        mantissa fits in int64, else the big-decimal form (format DecimalSI)."""
        if key == "0":
            return cls._make(0, 0, False, DECIMAL_SI)
        v, _, e = key.partition("e")
        iv = int(v)
        return cls._make(iv, int(e), not _int64_fits(iv), DECIMAL_SI)

    def as_int64(self) -> int | None:
        """``Quantity.AsInt64``: only for the int64 representation at a non-negative scale."""
        if self._dec or self._e < 0:
            return None
        return _scale_int64(self._v, self._e)

    def scaled_value(self, scale: int) -> int:
        """``Quantity.ScaledValue``: the amount in units of 10**scale, rounded up (away from
        negative infinity), e.g. ``scaled_value(-3)`` is ``MilliValue``."""
        shift = self._e - scale
        if shift >= 0:
            return int(self._v * 10**shift)
        return int(-((-self._v) // 10**-shift))

    def milli_value(self) -> int:
        return self.scaled_value(-3)

    def is_integer(self) -> bool:
        """The CEL ``isInteger()`` (``AsInt64`` succeeds)."""
        return self.as_int64() is not None

    def as_integer(self) -> int:
        """The CEL ``asInteger()``; QuantityError ``cannot convert value to integer``."""
        r = self.as_int64()
        if r is None:
            raise QuantityError("cannot convert value to integer")
        return r

    def as_approximate_float(self) -> float:
        """``AsApproximateFloat64``: unscaled * Pow10(exponent) in float64, as Go computes it."""
        try:
            base = float(self._v)
        except OverflowError:
            base = float("inf") if self._v > 0 else float("-inf")
        if self._e == 0:
            return base
        return base * _go_pow10(self._e)

    # ----------------------------------------------------------------------------- arithmetic

    def add(self, y: Quantity | int) -> Quantity:
        """``q.DeepCopy(); q.Add(y)`` (an int is ``NewQuantity(y, DecimalExponent)``)."""
        return self._combine(_coerce(y), 1)

    def sub(self, y: Quantity | int) -> Quantity:
        """``q.DeepCopy(); q.Sub(y)``."""
        return self._combine(_coerce(y), -1)

    def _combine(self, y: Quantity, sign: int) -> Quantity:
        fmt = y.format if self._v == 0 else self.format
        yv = y._v if sign > 0 else _wrap64(-y._v)
        if not self._dec and not y._dec:
            r = _int64_add(self._v, self._e, yv, y._e)
            if r is not None:
                return Quantity._make(r[0], r[1], False, fmt)
        lo = min(self._e, y._e)
        if max(self._e, y._e) - lo > MAX_ALIGN and self._v and y._v:
            raise QuantityError(ERR_ARITH_RANGE)
        v = self._v * 10 ** (self._e - lo) + sign * y._v * 10 ** (y._e - lo)
        if v.bit_length() > _MAX_BITS:
            raise QuantityError(ERR_ARITH_RANGE)
        return Quantity._make(v, lo, True, fmt)

    def neg(self) -> Quantity:
        return Quantity._make(
            _wrap64(-self._v) if not self._dec else -self._v, self._e, self._dec, self.format
        )

    def __neg__(self) -> Quantity:
        return self.neg()

    # ----------------------------------------------------------------------------- formatting

    def canonical(self) -> str:
        """``CanonicalizeBytes``: number and suffix in canonical form (ignores the cached input)."""
        if self._v == 0:
            return "0"
        fmt = self.format
        v, e = self._normalized()
        if fmt == BINARY_SI:
            # fractional values and values in (-1024, 1024) print as DecimalSI
            if e < 0 or (e < 4 and abs(v * 10**e) < 1024):
                fmt = DECIMAL_SI
            else:
                m = abs(v) * 10**e
                k = 0
                while m % 1024 == 0:
                    m //= 1024
                    k += 1
                return f"{'-' if v < 0 else ''}{m}{_BIN_BY_EXP.get(k * 10, '')}"
        r = e % 3
        if r:
            v *= 10**r
            e -= r
        if fmt == DECIMAL_SI:
            return f"{v}{_DEC_BY_EXP.get(e, '')}"
        return f"{v}e{e}" if e else str(v)

    def __str__(self) -> str:
        return self._s or self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _pow10(n: int) -> int:
    """10**n for n >= 0 (typed as int, unlike ``10 ** n``)."""
    return int(10**n)


def _wrap64(x: int) -> int:
    return ((x - _INT64_MIN) % (1 << 64)) + _INT64_MIN


def _coerce(y: Quantity | int) -> Quantity:
    return y if isinstance(y, Quantity) else Quantity(y, DECIMAL_EXPONENT)


def _int64_add(av: int, ae: int, bv: int, be: int) -> tuple[int, int] | None:
    """``int64Amount.Add``: the sum at the smaller scale, None on int64 overflow."""
    if bv == 0:
        return av, ae
    if av == 0:
        return bv, be
    if ae > be:
        sa = _scale_int64(av, ae - be)
        if sa is None:
            return None
        av, ae = sa, be
    elif be > ae:
        sb = _scale_int64(bv, be - ae)
        if sb is None:
            return None
        bv = sb
    c = av + bv
    return (c, ae) if _int64_fits(c) else None
