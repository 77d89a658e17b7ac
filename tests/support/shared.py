"""One costly result (a real agent's session, a built environment) made once
per test run and read by every test that asserts on it, on whichever xdist
worker each runs: the first to ask makes it under a file lock, in a folder of
the run's own temporary folder, and leaves it pickled there; the others wait
for the lock and read it back.  A run without workers makes it in its own
temporary folder, as any session fixture would."""

import fcntl
import os
import pickle


def once(tmp_path_factory, name, make):
    """make(folder) -> a picklable value, called once per test run with a
    new folder to work in (kept until pytest's own clean-up); every call
    returns that value.  A make() that fails leaves nothing: the next call,
    on another worker, tries again."""
    base = tmp_path_factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        base = base.parent  # the run's folder, shared by its workers (each has its own below it)
    top = base / f"shared-{name}"
    top.mkdir(exist_ok=True)
    result = top / "result.pickle"
    with open(top / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return pickle.loads(result.read_bytes())
        value = make(top / (worker or "main"))
        partial = result.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(value))
        os.replace(partial, result)
        return value
