"""understanding/words.py: how speech becomes the words the planner reads."""

import pytest

from wafer_reasoner.understanding.words import speech_words


@pytest.mark.parametrize("said, words", [
    ("g-go to the the kitchen", ["go", "to", "the", "kitchen"]),
    ("bring me the my phone", ["bring", "me", "my", "phone"]),
    ("wait 0.5 seconds", ["wait", "0", "5", "seconds"]),  # not 5: a leading zero is said
    ("wait one second", ["wait", "1", "seconds"]),
])
def test_stutters_doubled_articles_and_leading_zeros(said, words):
    assert speech_words(said) == words
