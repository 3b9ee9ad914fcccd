"""The public API: every name in ``guardlex.__all__`` resolves, and importing is light."""

from __future__ import annotations

import subprocess
import sys

import guardlex


def test_all_lists_exactly_the_lazy_exports() -> None:
    assert set(guardlex.__all__) - {"__version__"} == set(guardlex._EXPORTS)


def test_every_public_name_resolves() -> None:
    for name in guardlex.__all__:
        assert getattr(guardlex, name) is not None, name


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        guardlex.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_does_not_load_heavy_modules() -> None:
    code = (
        "import sys, guardlex; "
        "heavy = ('jieba', 'numpy', 'icu', 'hazm', 'guardlex.rules'); "
        "heavy = [m for m in heavy if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_help_lists_every_command() -> None:
    from guardlex.cli import COMMANDS, build_parser

    help_text = build_parser().format_help()
    for name in COMMANDS:
        assert name.replace("_", "-") in help_text


def test_normalise_is_callable_and_its_subpackage_stays_importable() -> None:
    code = (
        "from guardlex import normalise; import guardlex; "
        "import guardlex.normalise as m; "
        "print(normalise('\\u064a'), guardlex.normalise('\\u0643'), "
        "m.normalise_with_offsets('A').text)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["\u06cc", "\u06a9", "a"]
