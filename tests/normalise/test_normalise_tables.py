"""The normaliser's tables: generated files match their generator, and the fast paths'
assumptions about them hold for every character."""

from __future__ import annotations

import importlib.util
import unicodedata
from pathlib import Path
from types import ModuleType

import regex

from guardlex.normalise import _core, _tables, is_han
from guardlex.normalise.words import HAN_CLASS

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "src" / "guardlex" / "normalise" / "data"


def _gen_tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_tables", REPO / "tools" / "gen_tables.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_tables_equal_what_the_generator_produces() -> None:
    # PyICU is in the `test` extra: this must run, never skip.
    generated = _gen_tables().build_all()
    assert set(generated) == {"t2s.tsv", "confusables.tsv", "lookalikes.tsv"}
    for name, content in generated.items():
        committed = (DATA / name).read_text("utf-8")
        assert committed == content, f"{name}: run python tools/gen_tables.py"


def test_tables_state_their_provenance() -> None:
    for name in ("t2s.tsv", "confusables.tsv", "lookalikes.tsv"):
        head = (DATA / name).read_text("utf-8").splitlines()[:4]
        assert any(line.startswith("# source: ICU ") for line in head), name
        assert any("tools/gen_tables.py" in line for line in head), name
    head = (DATA / "arabic_variants.tsv").read_text("utf-8").splitlines()[:4]
    assert any(line.startswith("# source: ") for line in head)


def test_arabic_variants_table_names_every_letter() -> None:
    for line in (DATA / "arabic_variants.tsv").read_text("utf-8").splitlines():
        if line.startswith("#"):
            continue
        src, dst, name = line.split("\t")
        assert unicodedata.name(src) == name.split(" (")[0], line
        assert unicodedata.normalize("NFKC", src) == src and dst in "هیکنو", line


def test_lookalikes_fold_to_basic_latin_and_spare_the_locales_letters() -> None:
    look = _tables.lookalike_map()
    assert all(v in "abcdefghijklmnopqrstuvwxyz" for v in look.values())
    for ch in "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ":  # small capitals (x has none)
        assert ch in look, ch
    assert {c: look[c] for c in "ıɑɡȷօհ"} == dict(zip("ıɑɡȷօհ", "iagjoh", strict=True))
    # letters of the ten locales' alphabets are never folded
    for ch in "ñçßøłéèàâêîôûäöüабвгдеёжзийклмнопрстуфхцчшщъыьэюя":
        assert ch not in look, ch


def test_t2s_is_idempotent_and_known_pairs_hold() -> None:
    t2s = _tables.t2s_map()
    assert len(t2s) > 2000
    for src, dst in t2s.items():
        assert all(c not in t2s for c in dst), (src, dst)
    for trad, simp in [("價", "价"), ("請", "请"), ("發", "发"), ("髮", "发"), ("麼", "么")]:
        assert t2s[trad] == simp


def test_confusables_fold_the_usual_suspects() -> None:
    conf = _tables.confusable_map()
    assert {c: conf["Latin"][c] for c in "аеорсухві"} == dict(
        zip("аеорсухві", "aeopcyxbi", strict=True)
    )
    assert {c: conf["Cyrillic"][c] for c in "aeopcyxhkm"} == dict(
        zip("aeopcyxhkm", "аеорсухнкм", strict=True)
    )
    for target, table in conf.items():
        for src, dst in table.items():
            assert dst.casefold() == dst and unicodedata.normalize("NFKC", dst) == dst
            assert src != dst, target


def test_fused_table_is_closed_and_casefold_stable() -> None:
    fused = _tables.fused_map()
    for key, value in fused.items():
        if not value:
            continue
        assert value.casefold() == value, hex(key)
        for ch in value:
            assert fused.get(ord(ch), ch) == ch, (hex(key), value)


def test_han_ranges_match_unicode_script_han() -> None:
    everything = "".join(map(chr, range(0x40000)))
    ours = set(regex.findall(f"[{HAN_CLASS}]", everything, timeout=60))
    theirs = set(regex.findall(r"\p{Script=Han}", everything, timeout=60))
    assert ours == theirs
    assert all(is_han(ch) for ch in list(ours)[:5000])


def test_byte_classes_never_miss_a_latin_mark_or_mixed_script_character() -> None:
    """The fast path skips the mark/homoglyph regex based on UTF-8 lead bytes; check the
    classes against every character the regex (or casefold) can make relevant."""
    classes = _core._BYTE_CLASSES
    latin = regex.compile(r"[\p{Script=Latin}&&\p{L}]", regex.V1)
    mark = regex.compile(r"\p{M}")
    cyrillic = regex.compile(r"[\p{Script=Cyrillic}&&\p{L}]", regex.V1)
    greek = regex.compile(r"[\p{Script=Greek}&&\p{L}]", regex.V1)
    fused = _tables.fused_map()
    for cp in [*range(0x20000), *range(0xE0000, 0xE1000)]:
        ch = chr(cp)
        if 0xD800 <= cp < 0xE000 or unicodedata.normalize("NFKC", ch) != ch:
            continue  # the bytes are taken after NFKC
        cls = chr(classes[ch.encode("utf-8")[0]])
        produced = ch + ch.casefold() + (fused.get(cp) or "")
        if any(latin.match(c) for c in produced):
            assert cls in "LX", hex(cp)
        if mark.match(ch):
            assert cls in "MGCX", hex(cp)
        if any(cyrillic.match(c) for c in produced):
            assert cls in "CX", hex(cp)
        if any(greek.match(c) for c in produced):
            assert cls in "GX", hex(cp)


def test_general_punctuation_is_never_a_letter_or_mark_after_nfkc() -> None:
    """The byte-class check ignores UTF-8 E2 80 / E2 81 (U+2000-U+207F)."""
    letter_or_mark = regex.compile(r"[\p{L}\p{M}]")
    fused = _tables.fused_map()
    for cp in range(0x2000, 0x2080):
        ch = chr(cp)
        if unicodedata.normalize("NFKC", ch) != ch:
            continue
        produced = ch + ch.casefold() + (fused.get(cp) or "")
        assert not letter_or_mark.search(produced), hex(cp)
    assert not _core._maybe_marked_or_mixed("می\u200cخواهم \u200fقیمت".encode())
    assert _core._maybe_marked_or_mixed("\u200ca\u0301".encode())


def test_every_space_character_becomes_a_plain_space_before_collapsing() -> None:
    """The fast path collapses only runs of U+0020: every other character that
    ``str.isspace`` accepts must reach it as U+0020 (through NFKC or the table)."""
    fused = _tables.fused_map()
    for cp in range(0x110000):
        ch = chr(cp)
        if ch.isspace() and ch != " ":
            assert fused.get(cp) == " " or unicodedata.normalize("NFKC", ch) == " ", hex(cp)
