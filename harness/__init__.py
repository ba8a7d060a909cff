"""PDBench: an evaluation harness for language models in the iterated Prisoner's Dilemma."""

__version__ = "0.1.0"
