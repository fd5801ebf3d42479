"""Example producer (Python): how many files lack a license header.

The same behaviour is implemented in Rust, JavaScript and C beside this folder; ../README.md
specifies it. Build (from this folder, with the repository's wit/ package):

    componentize-py -d ../../../../wit/v0.2 -w producer componentize app -o license_header.wasm
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import measure
from wit_world.imports import snapshot

NAME = "license-header"
VERSION = "0.1.0"
METRICS = ["files_without_header", "license_header_share"]
HEAD_BYTES = 8192
MAX_LINES = 1_000_000
SCHEMA = (
    '{"type":"object","required":["paths"],"additionalProperties":false,'
    '"properties":{"paths":{"type":"array","items":{"type":"string"}},'
    '"marker":{"type":"string","minLength":1},'
    '"lines":{"type":"integer","minimum":1,"maximum":1000000}}}'
)


def parse_config(text):
    try:
        config = json.loads(text)
    except ValueError as e:
        raise Err(f"config is not JSON: {e}")
    if not isinstance(config, dict):
        raise Err("config must be a table")
    for key in config:
        if key not in ("paths", "marker", "lines"):
            raise Err(f"config.{key} is not a known key (allowed: paths, marker, lines)")
    paths = config.get("paths")
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
        raise Err("config `paths` must be a non-empty list of globs")
    marker = config.get("marker", "SPDX-License-Identifier:")
    if not isinstance(marker, str) or not marker:
        raise Err("config `marker` must be a non-empty string")
    lines = config.get("lines", 5)
    if (
        isinstance(lines, bool)
        or not isinstance(lines, (int, float))
        or not 1 <= lines <= MAX_LINES
        or lines != int(lines)
    ):
        raise Err("config `lines` must be a whole number from 1 to 1000000")
    return paths, marker.encode("utf-8"), int(lines)


def head(data, lines):
    """The bytes before the `lines`-th newline."""
    end = -1
    for _ in range(lines):
        end = data.find(b"\n", end + 1)
        if end < 0:
            return data
    return data[:end]


class Measure(exports.Measure):
    def describe(self):
        return measure.Info(NAME, VERSION, METRICS, SCHEMA)

    def run(self, config):
        paths, marker, lines = parse_config(config)
        total = 0
        findings = []
        for entry in snapshot.files(paths):
            total += 1
            if marker not in head(snapshot.read_range(entry.path, 0, HEAD_BYTES), lines):
                message = f"{entry.path}: no `{marker.decode()}` in the first {lines} lines"
                # fingerprint, path, line (the header belongs on line 1), column, severity, message
                findings.append(measure.Finding(entry.path, entry.path, 1, None, None, message))
        missing = len(findings)
        share = (total - missing) / total if total else 1.0
        return [
            # name, value, findings, counted (the value is the number of findings)
            measure.Metric("files_without_header", float(missing), findings, True),
            measure.Metric("license_header_share", share, [], False),
        ]
