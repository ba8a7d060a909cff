"""The Streamlit dashboard (`pdbench ui`): views over the same results folder and SQL views as the CLI."""
