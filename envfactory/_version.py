"""The package version, in a bottom-layer module so that any layer may report it."""

__version__ = "0.1.0"
