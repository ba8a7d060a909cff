"""The Streamlit dashboard (`pdbench ui`): views over the same results folder and SQL views as the CLI,
and a form that starts runs through the engine.

May import: errors, states, util, game, providers, calls, players, config, evolution, store, analysis, engine.
"""
