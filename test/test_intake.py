"""Speech heard a slice at a time: a stop is heeded as soon as it is taken, nothing is lost or reordered."""

from wafer_reasoner.runtime.intake import hear_in_slices


class Wire:
    """Transcripts waiting on the subscription, arriving in waves: each take after a slice is heard gets the
    next wave (what arrived meanwhile). Records every event in order."""

    def __init__(self, *waves: list) -> None:
        self.waves = [list(wave) for wave in waves]
        self.events = []

    def take(self, limit: int) -> list:
        if not self.waves:
            return []
        wave = self.waves[0]
        taken, self.waves[0] = wave[:limit], wave[limit:]
        if not self.waves[0]:
            self.waves.pop(0)
        return taken

    def hear(self, texts: list) -> None:
        self.events.append(("hear", list(texts)))

    def stop(self) -> None:
        self.events.append(("zero",))


def _run(wire: Wire, first: str = "u0", **kwargs) -> list:
    return hear_in_slices([first], wire.take, wire.hear, wire.stop, **kwargs)


def test_a_stop_at_the_end_of_a_burst_zeroes_before_anything_of_the_burst_is_heard():
    wire = Wire([f"u{i}" for i in range(1, 200)] + ["stop"])
    heard = _run(wire, slice_size=64)
    assert wire.events[0] == ("zero",)
    assert heard == ["u0"] + [f"u{i}" for i in range(1, 200)] + ["stop"]
    assert [len(event[1]) for event in wire.events[1:]] == [64, 64, 64, 9]


def test_a_stop_arriving_while_a_slice_is_heard_zeroes_before_the_next_slice():
    wire = Wire([f"u{i}" for i in range(1, 100)], ["u100", "please stop"], ["u101"])
    heard = _run(wire, slice_size=64)
    kinds = [event[0] for event in wire.events]
    assert kinds == ["hear", "zero", "hear", "hear"]  # zeroed after the first slice, before the rest is heard
    assert heard == ["u0"] + [f"u{i}" for i in range(1, 101)] + ["please stop", "u101"]
    assert sum(len(event[1]) for event in wire.events if event[0] == "hear") == len(heard)  # each heard once


def test_the_callback_first_message_alone_being_a_stop_zeroes_at_once():
    wire = Wire()
    assert _run(wire, first="STOP!") == ["STOP!"]
    assert wire.events == [("zero",), ("hear", ["STOP!"])]


def test_without_a_stop_nothing_is_zeroed_and_at_most_the_limit_is_taken():
    wire = Wire([f"u{i}" for i in range(1, 50)], [f"v{i}" for i in range(50)])
    heard = _run(wire, slice_size=16, limit=40)
    assert heard == ["u0"] + [f"u{i}" for i in range(1, 40)]
    assert all(event[0] == "hear" for event in wire.events)
    assert wire.take(1000)[:1] == ["u40"]  # the rest still waits, in order


def test_a_stop_word_inside_a_request_is_not_a_stop():
    wire = Wire(["bring me the stop sign", "don't stop"])
    _run(wire)
    assert ("zero",) not in wire.events
