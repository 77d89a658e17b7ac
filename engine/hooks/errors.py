"""Errors of the hooks: the state backends' and the banner templates'
(no imports: the hot path loads this)."""


class RedisError(Exception):
    pass


class TemplateLimit(Exception):
    """A template went past one of the limits of `hooks.templates`."""
