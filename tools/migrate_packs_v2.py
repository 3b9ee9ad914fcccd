"""Convert refusal.yaml and overview.yaml from schema_version 1 to 2, mechanically.

Run once: ``python tools/migrate_packs_v2.py [--check] [DIR ...]`` (default: the shipped
locales). What changes, and nothing else (comments, order and quoting are kept, because
the conversion edits the text line by line rather than re-dumping the YAML):

- ``schema_version: 1`` becomes ``schema_version: 2``;
- ``phrases:`` becomes ``templates:`` (the phrase syntax, words, ``{subject}`` and
  ``...``, is a subset of the template syntax) and ``patterns:`` becomes ``regex:``;
- refusal.yaml: the five category lists become one ``rules:`` list, in the same order,
  each rule with its ``category:``.

A ``concepts.yaml`` with no concepts is added where a locale has none, so every locale
has the complete file set. After converting, the script reads both versions and checks
that every rule has the same id, category, topic, about, examples, phrases (as
templates) and patterns (as regex); any difference aborts without writing. A phrase that
uses a character the template syntax reserves (``( ) [ ] | < > * ^ $ \\``) gets it
escaped with a backslash. ``--check`` reports what would change and exits 1 if anything
would.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import regex
import yaml

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "src" / "guardlex" / "locales"
CATEGORIES = ("engagement", "personal_data", "speculation", "meta", "task")
RESERVED = "()[]|<>*^$\\"
_KEY = regex.compile(r"^(\s*)(phrases|patterns):(\s*(?:#.*)?)$")
_ITEM = regex.compile(r"^(\s*)- id:")
_PHRASE_ITEM = regex.compile(r"^(\s*- )(.*)$")

CONCEPTS_TEMPLATE = """\
# yaml-language-server: $schema=../../rules/schemas/concepts.schema.json
# {name} concepts: named word families that rules use as <name> (see docs/packs.md).
# Each concept has `about`, `terms` (templates) and `examples`. None yet: the packs were
# converted mechanically from phrases and patterns; rewriting rules on concepts comes next.
locale: {code}
schema_version: 2
concepts: {{}}
"""


def _escape(phrase: str) -> str:
    return "".join("\\" + ch if ch in RESERVED else ch for ch in phrase)


def convert_text(text: str, kind: str) -> str:
    """The v2 text of one v1 file (line-based; see the module docstring)."""
    out: list[str] = []
    category: str | None = None
    seen_rules = False
    in_phrases: str | None = None  # indentation of the phrases key while inside it
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        if body.strip() == "schema_version: 1" and not body.startswith(" "):
            out.append(line.replace("schema_version: 1", "schema_version: 2"))
            continue
        if kind == "refusal" and body.rstrip(" ") in {f"{c}:" for c in CATEGORIES}:
            category = body.rstrip(" ")[:-1]
            if not seen_rules:
                out.append("rules:\n")
                seen_rules = True
            out.append(f"# -- {category}\n")
            continue
        m = _KEY.match(body)
        if m:
            indent, key, rest = m.groups()
            new = "templates" if key == "phrases" else "regex"
            in_phrases = indent if key == "phrases" else None
            out.append(f"{indent}{new}:{rest}\n")
            continue
        if in_phrases is not None:
            pm = _PHRASE_ITEM.match(body)
            stripped = body.strip()
            if pm and (len(pm.group(1)) - 2 >= len(in_phrases)):
                value = pm.group(2)
                if any(ch in value for ch in RESERVED):
                    parsed = yaml.safe_load(value)
                    value = yaml.safe_dump(
                        _escape(str(parsed)), allow_unicode=True, default_style="'"
                    ).strip()
                    value = value.removesuffix("\n...").strip()
                out.append(f"{pm.group(1)}{value}\n")
                continue
            if stripped and not stripped.startswith("#"):
                in_phrases = None
        out.append(line)
        im = _ITEM.match(body)
        if kind == "refusal" and im and category is not None:
            indent = im.group(1)
            out.append(f"{indent}  category: {category}\n")
    return "".join(out)


def _rules_v1(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    groups = (
        [(c, doc.get(c) or []) for c in CATEGORIES]
        if kind == "refusal"
        else [(None, doc.get("rules") or [])]
    )
    out = []
    for cat, rules in groups:
        for r in rules:
            r = dict(r)
            if cat:
                r["category"] = cat
            r["templates"] = [_escape(p) for p in r.pop("phrases", None) or []] or None
            r["regex"] = r.pop("patterns", None)
            out.append({k: v for k, v in r.items() if v is not None})
    return out


def _rules_v2(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in dict(r).items() if v is not None} for r in doc.get("rules") or []]


def check_same(old: str, new: str, kind: str) -> None:
    a = yaml.safe_load(old)
    b = yaml.safe_load(new)
    if b.get("schema_version") != 2:
        raise SystemExit("conversion left schema_version unchanged")
    if _rules_v1(a, kind) != _rules_v2(b):
        ra, rb = _rules_v1(a, kind), _rules_v2(b)
        for x, y in zip(ra, rb, strict=False):
            if x != y:
                raise SystemExit(f"rule {x.get('id')} differs after conversion:\n{x}\n{y}")
        raise SystemExit(f"rule count differs: {len(ra)} -> {len(rb)}")
    rest_a = {k: v for k, v in a.items() if k not in (*CATEGORIES, "rules", "schema_version")}
    rest_b = {k: v for k, v in b.items() if k not in ("rules", "schema_version")}
    if rest_a != rest_b:
        raise SystemExit(f"top-level keys differ: {rest_a.keys()} vs {rest_b.keys()}")


def migrate_folder(folder: Path, write: bool) -> list[str]:
    changed = []
    for kind in ("refusal", "overview"):
        path = folder / f"{kind}.yaml"
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if yaml.safe_load(text).get("schema_version") != 1:
            continue
        new = convert_text(text, kind)
        check_same(text, new, kind)
        changed.append(str(path))
        if write:
            path.write_text(new, encoding="utf-8")
    concepts = folder / "concepts.yaml"
    if not concepts.is_file():
        changed.append(str(concepts))
        if write:
            name = folder.name
            info = folder / "locale.yaml"
            if info.is_file():
                name = (yaml.safe_load(info.read_text(encoding="utf-8")) or {}).get("name", name)
            concepts.write_text(
                CONCEPTS_TEMPLATE.format(name=name, code=folder.name), encoding="utf-8"
            )
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="locale folders or a folder of them")
    ap.add_argument("--check", action="store_true", help="only report; exit 1 if not migrated")
    args = ap.parse_args(argv)
    roots = args.dirs or [SHIPPED]
    folders: list[Path] = []
    for r in roots:
        if (r / "refusal.yaml").is_file():
            folders.append(r)
        else:
            folders.extend(sorted(p for p in r.iterdir() if (p / "refusal.yaml").is_file()))
    changed: list[str] = []
    for folder in folders:
        changed.extend(migrate_folder(folder, write=not args.check))
    for c in changed:
        print(("would convert " if args.check else "converted ") + c)
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
