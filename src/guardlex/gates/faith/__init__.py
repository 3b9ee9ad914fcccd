"""The faithfulness gate, one module per responsibility (the public names are re-exported by
``guardlex.gates`` and ``guardlex.gates.faithfulness``):

* ``common``: size limits, packs and stopwords, evidence items, name mentions;
* ``money``: currency signs and words next to a number;
* ``analysis``: a text analysed into sentences, clauses, numbers with units, polarity;
* ``index``: lookups over the analysed evidence, built once per set of quotes;
* ``checks``: units, polarity flips, "unlimited" as a number, switched subjects;
* ``formula``: computed numbers and their formulas;
* ``auditor``, ``accept``, ``resolve``: the three public functions.

This package imports nothing at import time, so ``guardlex.gates.extract`` (which
``resolve`` uses) can import its modules without a cycle.
"""
