"""Helpers for the tests (not tests themselves). bench/ never imports them."""
