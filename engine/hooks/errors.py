"""Errors of the hooks' state backends (no imports: the hot path loads
this).  A banner template's is engine.base.errors.TemplateLimit."""


class RedisError(Exception):
    pass
