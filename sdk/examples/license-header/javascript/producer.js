// Example producer (JavaScript): how many files lack a license header. The same behaviour is
// implemented in Rust, Python and C beside this folder; ../README.md specifies it.
// Build: npm ci && node build.mjs ../../../../wit/v0.2 license_header.wasm
import { files, readRange } from 'discern:producer/snapshot@0.2.0';

const NAME = 'license-header';
const VERSION = '0.1.0';
const METRICS = ['files_without_header', 'license_header_share'];
const HEAD_BYTES = 8192n;
const MAX_LINES = 1000000;
const SCHEMA =
  '{"type":"object","required":["paths"],"additionalProperties":false,' +
  '"properties":{"paths":{"type":"array","items":{"type":"string"}},' +
  '"marker":{"type":"string","minLength":1},' +
  '"lines":{"type":"integer","minimum":1,"maximum":1000000}}}';

function parseConfig(text) {
  let config;
  try {
    config = JSON.parse(text);
  } catch (e) {
    throw `config is not JSON: ${e.message}`;
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw 'config must be a table';
  }
  for (const key of Object.keys(config)) {
    if (!['paths', 'marker', 'lines'].includes(key)) {
      throw `config.${key} is not a known key (allowed: paths, marker, lines)`;
    }
  }
  const paths = config.paths;
  if (!Array.isArray(paths) || paths.length === 0 || !paths.every((p) => typeof p === 'string')) {
    throw 'config `paths` must be a non-empty list of globs';
  }
  const marker = config.marker ?? 'SPDX-License-Identifier:';
  if (typeof marker !== 'string' || marker.length === 0) {
    throw 'config `marker` must be a non-empty string';
  }
  const lines = config.lines ?? 5;
  if (typeof lines !== 'number' || !Number.isInteger(lines) || lines < 1 || lines > MAX_LINES) {
    throw 'config `lines` must be a whole number from 1 to 1000000';
  }
  return { paths, marker, markerBytes: new TextEncoder().encode(marker), lines };
}

// The bytes before the `lines`-th newline.
function head(data, lines) {
  let end = -1;
  for (let i = 0; i < lines; i++) {
    end = data.indexOf(10, end + 1);
    if (end < 0) return data;
  }
  return data.subarray(0, end);
}

function contains(haystack, needle) {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return true;
  }
  return false;
}

export const measure = {
  describe() {
    return { name: NAME, version: VERSION, metrics: METRICS, configSchema: SCHEMA };
  },

  run(configText) {
    const { paths, marker, markerBytes, lines } = parseConfig(configText);
    let total = 0;
    const findings = [];
    for (const entry of files(paths)) {
      total += 1;
      if (!contains(head(readRange(entry.path, 0n, HEAD_BYTES), lines), markerBytes)) {
        findings.push({
          fingerprint: entry.path,
          path: entry.path,
          line: 1, // the header belongs at the top of the file
          message: `${entry.path}: no \`${marker}\` in the first ${lines} lines`,
        });
      }
    }
    const missing = findings.length;
    const share = total === 0 ? 1.0 : (total - missing) / total;
    return [
      { name: 'files_without_header', value: missing, findings, counted: true },
      { name: 'license_header_share', value: share, findings: [], counted: false },
    ];
  },
};
