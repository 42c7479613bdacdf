"""One-dimensional arrays packed into PostgreSQL's binary form here, for the ``unnest``
statements of :mod:`.queries`.

psycopg dumps a list of parameters through its generic list dumper, in Python: it looks
over the elements to choose their type, then dumps each through a dumper of its own. A
save batch sends a score of such arrays (a column each), a handful of elements each, and
that generic path cost the event loop more per save than the whole of the rest of the
driver's Python. :func:`packed` knows the few element types the driver sends and writes
the array in one pass; a column it does not know (a bool, a mix) is left to psycopg.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import psycopg
from psycopg import pq
from psycopg.adapt import Dumper

_HEADER = struct.Struct(">iiiii")  # dimensions, has nulls, element oid, length, lower bound
_LENGTH = struct.Struct(">i")
_INT8 = struct.Struct(">iq")
_FLOAT8 = struct.Struct(">id")
_NULL = _LENGTH.pack(-1)


class _Packed(bytes):
    """An array in its binary form; the subclass tells its type."""

    __slots__ = ()


class Int8Array(_Packed):
    __slots__ = ()


class Float8Array(_Packed):
    __slots__ = ()


class TextArray(_Packed):
    __slots__ = ()


class ByteaArray(_Packed):
    __slots__ = ()


class _PackedDumper(Dumper):
    format = pq.Format.BINARY

    def dump(self, obj: Any) -> bytes:
        return bytes(obj)


class _Int8ArrayDumper(_PackedDumper):
    oid = 1016  # int8[]


class _Float8ArrayDumper(_PackedDumper):
    oid = 1022  # float8[]


class _TextArrayDumper(_PackedDumper):
    oid = 1009  # text[]


class _ByteaArrayDumper(_PackedDumper):
    oid = 1001  # bytea[]


for _cls, _dumper in (
    (Int8Array, _Int8ArrayDumper),
    (Float8Array, _Float8ArrayDumper),
    (TextArray, _TextArrayDumper),
    (ByteaArray, _ByteaArrayDumper),
):
    psycopg.adapters.register_dumper(_cls, _dumper)

_INT8_RANGE = range(-(2**63), 2**63)


def _varlena(values: Iterable[Any], encode: bool) -> bytes:
    parts = []
    for v in values:
        if v is None:
            parts.append(_NULL)
            continue
        data = v.encode() if encode else v
        parts.append(_LENGTH.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def packed(values: Iterable[Any]) -> Any:
    """``values`` as one array parameter: packed when every element (``None`` aside) is an
    ``int`` (int8; within its range), a ``float`` (float8; ints among floats too), a
    ``str`` (text: a ``::json[]`` cast in the statement makes it JSON) or ``bytes``
    (bytea); else the list, for psycopg to dump."""
    values = list(values)
    kinds = set(map(type, values))
    nulls = type(None) in kinds
    kinds.discard(type(None))
    n = len(values)
    if not n:
        return values
    oid: int
    cls: type[_Packed]
    if kinds == {str}:
        cls, oid, body = TextArray, 25, _varlena(values, encode=True)
    elif kinds == {bytes}:
        cls, oid, body = ByteaArray, 17, _varlena(values, encode=False)
    elif kinds == {int}:
        if not all(v in _INT8_RANGE for v in values if v is not None):
            return values
        cls, oid = Int8Array, 20
        body = b"".join(_NULL if v is None else _INT8.pack(8, v) for v in values)
    elif kinds and kinds <= {int, float}:
        cls, oid = Float8Array, 701
        body = b"".join(_NULL if v is None else _FLOAT8.pack(8, v) for v in values)
    else:
        return values
    return cls(_HEADER.pack(1, int(nulls), oid, n, 1) + body)
