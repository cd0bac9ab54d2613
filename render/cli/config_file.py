"""Reading a user's ``config.json`` safely: a regular file or stdin, capped on the bytes actually read.

``stat().st_size`` is 0 for /dev/zero, /dev/urandom, a FIFO or /dev/stdin, so a
size check before reading protects nothing: the cap applies to the read itself
(at most MAX_CONFIG_BYTES + 1 bytes are ever read). Anything that is not a
regular file is refused before it is opened, so a FIFO never blocks; ``-``
reads standard input explicitly, under the same cap.
"""

from __future__ import annotations

import json
import os
import stat
import sys

from llm_formulas.render.cli.numbers import InputError, printable, quote

MAX_CONFIG_BYTES = 1_000_000  # a real config.json is a few kB


def _read_capped(stream, label: str) -> bytes:
    data = stream.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError(f"{label} is larger than {MAX_CONFIG_BYTES // 1000} kB: not a config.json")
    return data


def read_config_bytes(path: str) -> tuple[bytes, str]:
    """The bytes of ``path`` (``-`` for stdin) and a printable label for it."""
    if path == "-":
        return _read_capped(sys.stdin.buffer, "standard input"), "standard input"
    label = quote(path)
    try:
        status = os.stat(path)
    except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
        raise InputError(f"cannot read {label}: {getattr(error, 'strerror', None) or 'invalid path'}") from None
    if not stat.S_ISREG(status.st_mode):
        kind = "a directory" if stat.S_ISDIR(status.st_mode) else "not a regular file (a device, FIFO or socket)"
        raise InputError(f"cannot read {label}: {kind}; give a config.json file, or - for standard input")
    try:
        with open(path, "rb") as stream:
            return _read_capped(stream, label), printable(path)
    except OSError as error:
        raise InputError(f"cannot read {label}: {error.strerror or error}") from None


def unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads``' object_pairs_hook: an object that gives a key twice is refused (by default the last one would
    silently win, so ``"seq": 2048, ..., "seq": "1e100"`` would read as the second)."""
    document = {}
    for key, value in pairs:
        if key in document:
            raise ValueError(f"the key {quote(key)} is given twice")
        document[key] = value
    return document


def read_json_config(path: str) -> tuple[object, str]:
    """The parsed JSON document of ``path`` and its label; one clear line for anything malformed."""
    data, label = read_config_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{label} is not valid JSON: not UTF-8 text") from None
    try:
        return json.loads(text, object_pairs_hook=unique_keys), label
    except (ValueError, RecursionError) as error:  # JSONDecodeError, over-long integers, deep nesting, a key twice
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"{label} is not valid JSON: {printable(first_line, 120)}") from None
