"""The plan drafter: slot-abstract plan shapes, most frequent continuation, grammar- and budget-safe drafts."""

from wafer_reasoner.engine.drafter import PlanDrafter
from wafer_reasoner.engine.grammar import GrammarRefs, build_grammar
from wafer_reasoner.engine.tokenizer import EOS
from wafer_reasoner.training.vocab import build_tokenizer

TOKENIZER = build_tokenizer()
GRAMMAR = build_grammar(TOKENIZER, GrammarRefs(slots=6, place_slots=1))
BRING = ("navigate(", "obj:", "<o3>", ")", "; ", "pick(", "obj:", "<o3>", ")", "; ", "navigate(", "person:", "user",
         ")", "; ", "handover(", "obj:", "<o3>", ", ", "person:", "user", ")", EOS)
GO = ("navigate(", "obj:", "<o1>", ")", EOS)


def ids(tokens):
    return [TOKENIZER.ids[t] for t in tokens]


def cursor_after(tokens, budget=64):
    cursor = GRAMMAR.cursor(budget)
    for token in ids(tokens):
        cursor.advance(token)
    return cursor


def state_after(drafter, tokens):
    state = drafter.start()
    drafter.push(state, ids(tokens))
    return state


def test_a_known_shape_is_drafted_with_this_plans_object():
    drafter = PlanDrafter(TOKENIZER)
    drafter.learn(ids(BRING))
    so_far = ("navigate(", "obj:", "<o0>", ")")
    draft = drafter.draft(state_after(drafter, so_far), cursor_after(so_far), limit=64)
    assert draft == ids(tuple(t.replace("<o3>", "<o0>") for t in BRING[4:]))


def test_the_most_frequent_continuation_wins_and_a_new_object_stops_the_draft():
    drafter = PlanDrafter(TOKENIZER)
    for plan in (GO, BRING, BRING):
        drafter.learn(ids(plan))
    so_far = ("navigate(", "obj:", "<o5>", ")")
    assert drafter.draft(state_after(drafter, so_far), cursor_after(so_far), limit=3) == ids(("; ", "pick(", "obj:"))
    assert drafter.draft(state_after(drafter, ("navigate(",)), cursor_after(("navigate(",)), limit=8) == ids(("obj:",))


def test_an_unknown_prefix_drafts_nothing_and_the_grammar_cuts_a_draft():
    drafter = PlanDrafter(TOKENIZER)
    drafter.learn(ids(BRING))
    assert drafter.draft(state_after(drafter, ("wait(",)), cursor_after(("wait(",)), limit=8) == []
    narrow = build_grammar(TOKENIZER, GrammarRefs(slots=6, people=()))  # nobody to hand over to
    cursor = narrow.cursor(64)
    so_far = ("navigate(", "obj:", "<o0>", ")", "; ", "pick(", "obj:", "<o0>", ")", "; ")
    for token in ids(so_far):
        cursor.advance(token)
    draft = drafter.draft(state_after(drafter, so_far), cursor, limit=8)
    assert draft == ids(("navigate(",))  # person: is gone: the draft stops


def test_a_plan_off_every_known_shape_stays_off():
    drafter = PlanDrafter(TOKENIZER)
    drafter.learn(ids(BRING))
    state = state_after(drafter, ("wait(", "1", ")", "; ", "navigate("))
    assert state.node is None
    assert drafter.draft(state, cursor_after(("wait(", "1", ")", "; ", "navigate(")), limit=8) == []


def prompt(said: str) -> list:
    """A prompt's token ids with this utterance (only the sections the drafter reads)."""
    return ids(("<bos>", "<say>", *said.split(), "<scene>", "<plan>"))


def test_a_number_is_copied_from_the_utterance_whatever_its_length():
    drafter = PlanDrafter(TOKENIZER)
    drafter.learn(ids(("rotate(", "9", "0", ")", EOS)), prompt("turn 9 0 degrees"))
    state = drafter.start(prompt("turn 1 3 5 degrees"))
    assert drafter.draft(state, GRAMMAR.cursor(64), limit=8) == ids(("rotate(", "1", "3", "5", ")", EOS))
    drafter.learn(ids(("rotate(", "-", "4", "5", ")", EOS)), prompt("turn 4 5 degrees right"))
    drafter.push(state, ids(("rotate(", "-")))  # the model chose a sign first: the number still follows
    cursor = cursor_after(("rotate(", "-"))
    assert drafter.draft(state, cursor, limit=8) == ids(("1", "3", "5", ")", EOS))


def test_the_first_token_is_guessed_from_the_words_said():
    drafter = PlanDrafter(TOKENIZER)
    for _ in range(3):
        drafter.learn(ids(GO), prompt("go to the cup"))
    drafter.learn(ids(("wait(", "5", ")", EOS)), prompt("wait 5 seconds"))
    assert drafter.start(prompt("please wait 2 seconds")).first == TOKENIZER.ids["wait("]
    assert drafter.start(prompt("go to the book")).first == TOKENIZER.ids["navigate("]
    state = drafter.start(prompt("please wait 2 seconds"))
    assert drafter.draft(state, GRAMMAR.cursor(64), limit=8) == ids(("wait(", "2", ")", EOS))


def test_a_new_place_is_left_to_the_model_and_the_shape_goes_on_after_it():
    drafter = PlanDrafter(TOKENIZER)
    plan = ("navigate(", "place:", "<p0>", ")", EOS)
    drafter.learn(ids(plan), prompt("go to the #1 now"))
    state = drafter.start(prompt("go to the #1 please"))
    assert drafter.draft(state, GRAMMAR.cursor(64), limit=8) == ids(("navigate(", "place:"))  # which place: the model
    drafter.push(state, ids(plan[:3]))
    assert drafter.draft(state, cursor_after(plan[:3]), limit=8) == ids((")", EOS))
