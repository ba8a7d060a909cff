"""``python -m harness.cli``: the same command line as the ``pdbench`` script."""

from harness.cli import main

main()
