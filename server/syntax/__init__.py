"""Syntax layer: text -> positioned trees. Never raises on bad input."""
