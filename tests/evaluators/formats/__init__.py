"""Tests of ``evaluators.formats``."""
