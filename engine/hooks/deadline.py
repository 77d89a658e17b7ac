"""One deadline for a whole hook process (`hooks.deadline_ms`).

A SIGALRM timer, counted from the process start: when it fires, the hook
logs one line and leaves with status 0 having printed nothing.  Nothing is
ever half-printed, because the timer is disarmed before the one complete
JSON object is written.  Python runs a signal handler between bytecodes (and
interrupts blocking reads: a FIFO, a slow socket), so a single C call that
runs long (a huge allocation) could hold it off; `kill_after_ms` arms the
C-level faulthandler watchdog as the last resort, which ends the process
(status 1, which the agent treats as a non-blocking error) without a word.
Uses the C modules _signal and faulthandler: `signal` imports enum, which
the hot path avoids.

The hook arms it first, with the engine's own bound (hooks.deadline_ms of
pipelines/settings/engine.yaml), before it loads or compiles any profile;
once the profile's hooks settings are known, `lower()` may only bring it
closer (a profile never buys a hook more time than the engine allows).
"""

import os
import time

STARTED = time.monotonic()  # as near the process start as an import gets
# True while a hook event runs in this process: its own deadline and the
# template limits bound everything then (engine validate's trial rendering
# of templates is skipped, see hookcheck.py).
IN_HOOK = False


def restart(at=None):
    """Count the hook's time from `at` (now when None); returns the start it
    replaces.  For a program that runs many events in one process (engine
    replay): each gets its own start, as each hook process has."""
    global STARTED
    before, STARTED = STARTED, (time.monotonic() if at is None else at)
    return before


class Expired(BaseException):
    """Raised instead of exiting when the hook runs inside another program
    (tests): `except Exception` in the code it interrupts cannot swallow it."""


class Deadline:
    def __init__(self, log, exit=None):
        self.log = log
        self.exit = exit  # None: a real hook process, os._exit
        self.armed = False
        self._devnull = None
        # Run once when the deadline passes, before leaving: the prompt's turn
        # count when it has not been counted yet (dispatch.py).
        self.on_expire = None

    def arm(self, deadline_ms, kill_after_ms):
        import _signal

        if self.armed:
            self.disarm()
        left = deadline_ms / 1000.0 - (time.monotonic() - STARTED)
        self.ms = deadline_ms
        self.kill_ms = kill_after_ms
        _signal.signal(_signal.SIGALRM, self._expire)
        self.armed = True
        if left <= 0:
            self._expire(None, None)
            return
        _signal.setitimer(_signal.ITIMER_REAL, left)
        if self.exit is None:
            import faulthandler

            self._devnull = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
            faulthandler.dump_traceback_later(max(kill_after_ms / 1000.0 - (time.monotonic() - STARTED), 0.001),
                                              exit=True, file=self._devnull)

    def lower(self, deadline_ms, kill_after_ms):
        """Re-arm with the profile's values where they are lower (only)."""
        if not self.armed:
            return self.arm(deadline_ms, kill_after_ms)
        if deadline_ms < self.ms or kill_after_ms < self.kill_ms:
            self.arm(min(deadline_ms, self.ms), min(kill_after_ms, self.kill_ms))

    def until(self, margin_ms=0):
        """The monotonic time by which a wait must end to leave `margin_ms`
        before the deadline; None when not armed (no bound: wait)."""
        if not self.armed:
            return None
        return STARTED + (self.ms - margin_ms) / 1000.0

    def disarm(self):
        if not self.armed:
            return
        import _signal

        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, _signal.SIG_DFL)
        if self._devnull is not None:
            import faulthandler

            faulthandler.cancel_dump_traceback_later()
            os.close(self._devnull)
            self._devnull = None
        self.armed = False

    def _expire(self, signum, frame):
        import _signal

        # No second alarm; the watchdog stays armed until the process leaves:
        # what runs now (the prompt's count, the log line) may block too.
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        last, self.on_expire = self.on_expire, None
        if last is not None:
            try:
                last()
            except BaseException:  # noqa: BLE001 - leaving is all that matters now
                pass
        try:
            self.log(f"deadline of {self.ms} ms reached; exiting without output")
        except BaseException:  # noqa: BLE001 - leaving is all that matters now
            pass
        if self.exit is None:
            os._exit(0)
        self.disarm()
        self.exit()
