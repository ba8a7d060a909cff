"""Configs the commands build from a few options rather than a file: ``pdbench eval`` (``evaluation``: one
model against a panel), ``pdbench tournament`` (``tournament``: a round robin), the published protocols
(``suites``), a duel of two players (``duel``), player lists as typed on the command line (``players``) and
the default panels (``panels``)."""
