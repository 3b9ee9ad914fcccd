"""``guardlex new-locale``: write a complete, commented locale folder a linguist fills in.

Every pack file is written (``locale.yaml``, ``concepts.yaml``, ``refusal.yaml``,
``overview.yaml``, ``first_person.yaml``, ``lexicon.yaml``, ``messages.yaml``,
``stopwords.yaml``), each with its ``locale:``/``schema_version:`` header, a
``yaml-language-server`` line pointing at the shipped JSON Schema (completion and checks
in editors) and comments saying what goes where. The new folder loads and lints clean
as written: it has no rules yet, and its messages are the root locale's texts, marked
for translation. ``docs/packs.md`` walks through filling it in.
"""

from __future__ import annotations

import os
from pathlib import Path

from guardlex.errors import GuardlexError
from guardlex.rules._schema import SCHEMA_DIR
from guardlex.rules.loader import LOCALE_CODE
from guardlex.rules.locale_info import root_locale, shipped_locale_infos, shipped_messages

#: The files a locale folder holds, in the order docs/packs.md presents them.
SCAFFOLD_FILES = (
    "locale",
    "concepts",
    "refusal",
    "overview",
    "first_person",
    "lexicon",
    "messages",
    "stopwords",
)
_V2 = {"concepts", "refusal", "overview"}


class ScaffoldError(GuardlexError):
    """A locale folder cannot be created (bad code, folder exists, unknown script)."""


def _header(kind: str, folder: Path, code: str, what: str) -> str:
    schema = SCHEMA_DIR / f"{kind}.schema.json"
    try:
        ref = os.path.relpath(schema, folder)
    except ValueError:  # another drive (Windows): an absolute path still works
        ref = str(schema)
    version = 2 if kind in _V2 else 1
    return (
        f"# yaml-language-server: $schema={Path(ref).as_posix()}\n"
        f"# {what}\n"
        f"locale: {code}\n"
        f"schema_version: {version}\n"
    )


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _bodies(code: str, name: str, scripts: list[str], direction: str) -> dict[str, str]:
    root = root_locale(shipped_locale_infos()) or "en"
    messages = shipped_messages(root)
    message_lines = "".join(
        f"  {key}: {_quote(text.strip())}\n" for key, text in sorted(messages.items())
    )
    return {
        "locale": f"""name: {name}
# ISO 15924 codes of the scripts the locale is written in: Latn, Arab, Cyrl, Deva, Hani ...
# The reader's language is told by these scripts, then by the words below.
scripts: [{", ".join(scripts)}]
direction: {direction}              # ltr or rtl
fallback: {root}                  # whose messages fill gaps while translation goes on
detection:
  # frequent words that tell this locale from the other loaded locales of the same
  # script (stopwords.yaml counts too), and letters only this locale uses (ñ, ß, پ)
  hints: []
  letters: []
  letter_weight: 1
# titles written before a name ("Dr. Reyes"), and after it (Chinese 博士, Hindi जी)
titles: []
titles_after: []
# the subject name examples use, written in this locale's script
example_subject: Dana Reyes
example_subject_spellings: []
money:
  currency: []        # currency words and codes next to an amount (euro, руб, تومان)
  magnitudes: []      # thousand, million ... next to an amount
  price_words: []     # words of a field name that ask for a price (price, 价格)
follow_ups:
  # acknowledgements that close a turn ("thanks", "ok", "got it"): a follow-up made
  # only of these never inherits the previous question's refusal
  closings: []
  # phrases that ask for more of the same ("the same in English", "again", "go on"): a
  # follow-up holding one of these continues the previous question, however long it is
  continuations: []
  # words that ask about the present ("and now?", "lately?", "these days?"): an elliptical
  # follow-up made only of these, after a question that was not refused, is routed to
  # this locale's overview rule of topic now
  now: []
""",
        "concepts": """\
# Concepts are named word families; rules combine them: <price> in a template means
# "any term of the concept price". Terms are templates too: (a | b), [optional], stem*.
concepts: {}
#  price:
#    about: Words for what work costs.
#    terms:
#      - (price | prices | rate | rates | fee | fees)
#      - how much
#    examples:
#      match: [what are her rates, how much is it]
#      no_match: [the price of GPUs in the article]
""",
        "refusal": """# Refusal rules. Each has a stable id, a category (engagement, personal_data,
# speculation, meta, task), what it catches (about), templates and/or a frame (when:),
# and examples: at least two questions it must catch and one it must not.
rules: []
#  - id: engagement-price
#    category: engagement
#    about: Asks what the subject charges.
#    templates:
#      - how much (does | would) {subject} charge
#    when:                 # a template that starts with { [ ( or * needs quotes in YAML
#      all: [<price>, "{subject}"]
#      none: [<about_article>]
#    examples:
#      match: [How much does Dana charge?, what are her rates]
#      no_match: [What does her article say about pricing?]
""",
        "overview": """\
# Overview rules: questions about the subject's work as a whole, each with a topic
# (now, career, projects, research, publications, education, skills, services).
rules: []
#  - id: overview-now
#    topic: now
#    about: Asks what the subject works on now.
#    templates:
#      - what is {subject} (working on | doing) [now | these days]
#    examples:
#      match: [What is Dana working on now?, what is she doing these days]
#      no_match: [What did she work on in 2019?]
""",
        "first_person": """\
# First-person pronouns and possessives (singular and plural). The answer gate stops
# an answer that speaks as the site's owner. Languages that mark person on the verb
# also list first-person verb forms (verb_forms), generated by a tool where possible.
pronouns: []
verb_forms: []
exceptions: []      # words or compounds in which an entry does not count
# examples:
#   match: [I built this tool., we wrote the article]
#   no_match: [She built this tool.]
""",
        "lexicon": """\
# How the subject is referred to ({subject} in templates), and the words the answer
# gates read: ordinals 1-10, negations, units, rate words (per), abbreviations.
pronouns: []        # third-person forms: she, her, he, him, they ...
per: []             # rate words: per, a, 每
abbreviations: []   # abbreviations whose dot never ends a sentence (e.g., Dr.)
""",
        "messages": f"""# Copied from '{root}': translate each one.
# Never write them in the first person: the assistant never speaks as the owner.
messages:
{message_lines}""",
        "stopwords": """\
# Frequent words, left out when keyword coverage is measured and used to tell this
# locale from others. Usually generated: see tools/gen_stopwords.py.
words: []
""",
    }


_WHAT = {
    "locale": "Facts about the locale that the engine and the gates read.",
    "concepts": "Named word families, the building blocks of rules (see docs/packs.md).",
    "refusal": "Questions the assistant refuses, in five categories.",
    "overview": "Questions about the subject's work as a whole, routed to dated records.",
    "first_person": "First-person words an answer must not contain.",
    "lexicon": "Subject pronouns and the vocabulary of the answer gates.",
    "messages": "The fixed texts a reader sees.",
    "stopwords": "Stopwords for keyword coverage.",
}


def new_locale(
    code: str,
    directory: str | Path = ".",
    *,
    name: str | None = None,
    scripts: tuple[str, ...] = ("Latn",),
    direction: str = "ltr",
) -> Path:
    """Create ``<directory>/<code>/`` with every pack file; return the folder.

    Raises :class:`ScaffoldError` for a code that is not a locale code, a code guardlex
    ships (extend it instead: an extra folder with only the files you change), an
    existing folder, or a script code that is not ISO 15924 shaped.
    """
    if not LOCALE_CODE.match(code, timeout=1.0):
        raise ScaffoldError(
            f"{code!r} is not a locale code; use a lower-case language code with an "
            "optional region or script, such as tt, fil or pt-BR"
        )
    if direction not in ("ltr", "rtl"):
        raise ScaffoldError(f"--direction is {direction!r}; write ltr or rtl")
    for script in scripts:
        if not (len(script) == 4 and script[0].isupper() and script[1:].islower()):
            raise ScaffoldError(
                f"script {script!r} is not an ISO 15924 code; write four letters, the first "
                "a capital: Latn, Arab, Cyrl, Deva, Hani"
            )
    base = Path(directory)
    folder = base / code
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; choose another --dir or remove it")
    folder.mkdir(parents=True)
    bodies = _bodies(code, name or code, list(scripts), direction)
    for kind in SCAFFOLD_FILES:
        text = _header(kind, folder, code, _WHAT[kind]) + bodies[kind]
        (folder / f"{kind}.yaml").write_text(text, encoding="utf-8")
    return folder


__all__ = ["SCAFFOLD_FILES", "ScaffoldError", "new_locale"]
