"""A time bound for one call in this process: its own SIGALRM timer, which
gives way to a sooner one already running and puts a later one back.
Used for a trial render of a hook's template (engine/hooks/banner.py) and
for rendering a report's templates (engine/session, engine/replay)."""

import time


class TimeUp(BaseException):
    """Raised by within() when its own time is up."""


def within(seconds, fn):
    """fn(), ended by TimeUp after `seconds` (a trial render of a template).
    A timer already running in this process that ends sooner (a hook's
    deadline, a compile box's limit) ends it as it would have; one that
    ends later is put back afterwards, with what is left of it, and so is
    its handler: a compile box's 60 s never stands in for a check's
    deadline_ms."""
    import _signal

    outer_left = _signal.getitimer(_signal.ITIMER_REAL)[0]
    if outer_left and outer_left <= seconds:
        return fn()

    def time_up(signum, frame):
        raise TimeUp()

    before = _signal.signal(_signal.SIGALRM, time_up)
    start = time.monotonic()
    _signal.setitimer(_signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, _signal.SIG_DFL if before is None else before)
        if outer_left:
            _signal.setitimer(_signal.ITIMER_REAL, max(outer_left - (time.monotonic() - start), 0.001))
