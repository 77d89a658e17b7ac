"""The engine's version (the package's `engine.__version__`): a cache written by
another version is never read back."""

__version__ = "0.1.0"
