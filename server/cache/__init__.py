"""opgen's persistent cache (store.py): bytes under content-addressed keys, shared by every opgen process."""
