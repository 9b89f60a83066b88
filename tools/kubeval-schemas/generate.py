#!/usr/bin/env python3
"""Generates engine/fn/src/builtin/kubeval/schemas.json.deflate, the
Kubernetes JSON schemas the built-in kubeval validates against offline.

Source: the `kubernetes-validate` wheel on PyPI (pinned below, checked by
sha256), which ships the `local-strict` schemas of Kubernetes 1.25 to 1.37
(one `_definitions.json` per version, one file per kind referring to it).
The non-strict schemas are the strict ones without `additionalProperties:
false` (checked here), so only the strict ones are kept.

What is kept: every definition and every kind file (those naming an
`x-kubernetes-group-version-kind`), with descriptions and `x-kubernetes-*`
keys dropped and `$ref`s shortened to the definition's name. Each distinct
schema is stored once across versions (keyed by its sha256), so the versions
cost little more than the first. The JSON is then deflated (level 9).

Usage: python3 tools/kubeval-schemas/generate.py [VERSIONS...]
  (no arguments: every version in the wheel). Needs pip; downloads the
  pinned wheel into a temporary directory.
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
import zlib

PACKAGE = "kubernetes-validate==1.37.0"
WHEEL = "kubernetes_validate-1.37.0-py3-none-any.whl"
WHEEL_SHA256 = "85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9"
OUT = os.path.join(
    os.path.dirname(__file__), "..", "..",
    "engine", "fn", "src", "builtin", "kubeval", "schemas.json.deflate")
PREFIX = "kubernetes_validate/kubernetes-json-schema/"
DROP = {"description", "$schema", "$id", "default"}


def strip(x):
    """The schema without what validation does not read (property names
    such as `description` or `$ref` are kept)."""
    if isinstance(x, list):
        return [strip(v) for v in x]
    if not isinstance(x, dict):
        return x
    out = {}
    for k, v in x.items():
        if k in DROP or k.startswith("x-kubernetes-"):
            continue
        if k == "$ref" and isinstance(v, str):
            v = v.rsplit("/", 1)[-1]
        elif k in ("properties", "patternProperties") and isinstance(v, dict):
            v = {name: strip(s) for name, s in v.items()}
        else:
            v = strip(v)
        out[k] = v
    return out


def wheel_bytes():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q",
             "-d", d, PACKAGE], check=True)
        with open(os.path.join(d, WHEEL), "rb") as f:
            return f.read()


def main(wanted):
    data = wheel_bytes()
    if hashlib.sha256(data).hexdigest() != WHEEL_SHA256:
        sys.exit(f"{WHEEL}: sha256 is not {WHEEL_SHA256}")
    z = zipfile.ZipFile(io.BytesIO(data))
    names = z.namelist()
    dirs = sorted({n[len(PREFIX):].split("/")[0] for n in names
                   if n.startswith(PREFIX) and n.endswith("-local-strict/_definitions.json")})
    pool = {}
    versions = {}

    def intern(schema):
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        pool[key] = schema
        return key

    for d in dirs:
        version = d[1:].split("-")[0]
        if wanted and version not in wanted:
            continue
        base = PREFIX + d + "/"
        defs = json.loads(z.read(base + "_definitions.json"))["$defs"]
        loose = json.loads(z.read(PREFIX + d.replace("-local-strict", "-local")
                                  + "/_definitions.json"))["$defs"]
        check_loose(defs, loose, version)
        kinds = {}
        for n in names:
            if not n.startswith(base) or n.endswith("/_definitions.json") \
                    or n.endswith("/all.json"):
                continue
            schema = json.loads(z.read(n))
            if "x-kubernetes-group-version-kind" not in schema:
                continue
            kinds[n[len(base):-len(".json")]] = intern(strip(schema))
        versions[version] = {
            "defs": {k: intern(strip(v)) for k, v in sorted(defs.items())},
            "kinds": dict(sorted(kinds.items())),
        }
    bundle = {"source": PACKAGE, "pool": dict(sorted(pool.items())),
              "versions": versions}
    text = json.dumps(bundle, sort_keys=True, separators=(",", ":")).encode()
    packed = zlib.compress(text, 9)
    with open(OUT, "wb") as f:
        f.write(packed)
    print(f"{len(versions)} versions, {len(pool)} distinct schemas, "
          f"{len(text)} bytes of JSON, {len(packed)} deflated -> {OUT}",
          file=sys.stderr)


def check_loose(strict, loose, version):
    """The non-strict schemas are the strict ones less additionalProperties: false."""
    def relax(x):
        if isinstance(x, dict):
            return {k: relax(v) for k, v in x.items()
                    if not (k == "additionalProperties" and v is False)}
        if isinstance(x, list):
            return [relax(v) for v in x]
        return x
    for k, v in strict.items():
        if relax(v) != loose.get(k):
            sys.exit(f"{version}: {k} is not the strict schema relaxed")


if __name__ == "__main__":
    main(set(sys.argv[1:]))
