"""Errors of the hook state backends (no imports: the hot path loads this)."""


class RedisError(Exception):
    pass
