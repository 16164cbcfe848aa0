from __future__ import annotations

import gc

import pytest

from agentv_ci.results.gc_pause import paused_gc


def test_collector_is_paused_inside_and_restored_after_an_exception() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_nested_pauses_leave_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # it was off before: stays off
    finally:
        gc.enable()


def test_freeze_moves_what_the_block_holds_out_of_the_collectors_sight() -> None:
    before = gc.get_freeze_count()
    try:
        with paused_gc(freeze=True):
            held = [[index] for index in range(1000)]
        assert gc.get_freeze_count() >= before + len(held)
        assert gc.isenabled()
    finally:
        gc.unfreeze()
