"""The test processes' own heap (tests/conftest.py `_park_the_heap`): what
collection built is frozen out of the cyclic collector, so the full
collections of a long run walk only what the tests made since."""

import gc


def test_what_collection_built_is_out_of_the_cyclic_collector():
    assert gc.get_freeze_count() > 10_000


def test_a_parked_object_is_still_freed_when_its_last_reference_goes():
    import weakref

    class Box:
        pass

    box = Box()
    gone = weakref.ref(box)
    gc.freeze()
    del box
    assert gone() is None
