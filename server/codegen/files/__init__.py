"""Whole generated files: one module per file family, each turning the model into template environments."""
