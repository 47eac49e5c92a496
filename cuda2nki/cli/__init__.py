"""The ``cuda2nki`` command line: thin wrappers over the public API."""
