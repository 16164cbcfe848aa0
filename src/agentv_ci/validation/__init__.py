"""Validation: diagnostics and the checks that produce them."""
