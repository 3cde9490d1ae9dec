"""Battery and load: when LLM jobs wait (pure decision, table-driven) and the real psutil probe."""

from __future__ import annotations

import pytest

from memd.core.conditions import SystemState, defer_reason, probe_system


@pytest.mark.parametrize(
    ("state", "why"),
    [
        (SystemState(None, None, 0.5, 4), ""),  # no battery (desktop, CI)
        (SystemState(80.0, False, 0.5, 4), ""),  # on battery, enough charge
        (SystemState(29.0, False, 0.5, 4), "on battery at 29% (below 30%)"),
        (SystemState(10.0, True, 0.5, 4), ""),  # charging
        (SystemState(10.0, None, 0.5, 4), ""),  # plug state unknown: treated as plugged in
        (SystemState(None, None, 4.0, 4), ""),  # load equal to the cores is fine
        (SystemState(None, None, 4.01, 4), "system busy: load 4.01 > 4 cores"),
    ],
)
def test_defer_reason(state: SystemState, why: str) -> None:
    assert defer_reason(state, 30) == why


def test_probe_reads_this_machine() -> None:
    st = probe_system()
    assert st.cores >= 1 and st.load_1m >= 0
    assert st.battery_percent is None or 0 <= st.battery_percent <= 100
