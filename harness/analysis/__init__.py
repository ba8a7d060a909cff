"""Metrics, reports and statistics computed from the results database."""
