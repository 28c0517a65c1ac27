"""Evaluation scores, computed by hand: Recall@k over distinct titles, all-found, EM and F1."""

from __future__ import annotations

import pytest

from deepsearcher.evaluation.scoring import (
    all_found,
    distinct_titles,
    exact_match,
    normalize_answer,
    recall_at_k,
    strip_citations,
    token_f1,
)


def test_recall_counts_distinct_titles_in_rank_order() -> None:
    # Distinct in order: A, B, C, D. Gold {A, D}.
    retrieved = ["A", "A", "B", "A", "C", "B", "D"]
    assert distinct_titles(retrieved) == ["A", "B", "C", "D"]
    assert recall_at_k(retrieved, ["A", "D"], 1) == 0.5
    # The first 2 *distinct* titles are A, B (not A, A): still only A.
    assert recall_at_k(retrieved, ["A", "D"], 2) == 0.5
    assert recall_at_k(retrieved, ["A", "D"], 3) == 0.5
    assert recall_at_k(retrieved, ["A", "D"], 4) == 1.0
    assert all_found(retrieved, ["A", "D"]) is True


def test_duplicates_do_not_push_a_gold_title_out_of_the_first_k() -> None:
    # Three chunks of one page then the second gold page: Recall@2 sees X, G2.
    retrieved = ["X", "X", "X", "G2", "G1"]
    assert recall_at_k(retrieved, ["G1", "G2"], 2) == 0.5
    assert recall_at_k(retrieved, ["G1", "G2"], 3) == 1.0


def test_k_larger_than_the_list() -> None:
    retrieved = ["B", "A"]
    assert recall_at_k(retrieved, ["A", "C"], 10) == 0.5
    assert recall_at_k(retrieved, ["A", "B"], 10) == 1.0
    assert all_found(retrieved, ["A", "C"]) is False


def test_four_gold_titles() -> None:
    gold = ["P", "Q", "R", "S"]
    retrieved = ["Q", "x", "S", "Q", "y", "P", "z", "R"]
    # Distinct: Q, x, S, y, P, z, R
    assert recall_at_k(retrieved, gold, 1) == 0.25
    assert recall_at_k(retrieved, gold, 2) == 0.25
    assert recall_at_k(retrieved, gold, 3) == 0.5
    assert recall_at_k(retrieved, gold, 5) == 0.75
    assert recall_at_k(retrieved, gold, 6) == 0.75
    assert recall_at_k(retrieved, gold, 7) == 1.0
    assert all_found(retrieved, gold) is True
    assert all_found(retrieved[:6], gold) is False


def test_empty_retrieval() -> None:
    assert recall_at_k([], ["A", "B"], 5) == 0.0
    assert all_found([], ["A"]) is False


def test_duplicate_gold_titles_count_once_and_bad_input_is_refused() -> None:
    assert recall_at_k(["A"], ["A", "A", "B"], 2) == 0.5
    with pytest.raises(ValueError):
        recall_at_k(["A"], ["A"], 0)
    with pytest.raises(ValueError):
        recall_at_k(["A"], [], 2)


def test_normalize_answer() -> None:
    assert normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_answer("An apple, a day; THE end.") == "apple day end"
    assert normalize_answer("  Theory of   the Atom ") == "theory of atom"  # "the" only as a word
    assert normalize_answer("...") == ""


def test_exact_match_with_normalisation_and_aliases() -> None:
    assert exact_match("the Beatles.", "Beatles") == 1.0
    assert exact_match("Beatles", "The Rolling Stones") == 0.0
    assert exact_match("Stanley Hall", ["G. Stanley Hall", "Stanley Hall"]) == 1.0
    assert exact_match("G Stanley Hall", ["G. Stanley Hall", "Stanley Hall"]) == 1.0  # "G." → "g"


def test_token_f1_by_hand() -> None:
    # prediction tokens: [paris, france]; gold: [paris] → P = 1/2, R = 1, F1 = 2/3
    assert token_f1("Paris, France", "Paris") == pytest.approx(2 / 3)
    # [new, york, city] vs [new, york] → P = 2/3, R = 1 → F1 = 0.8
    assert token_f1("New York City", "the New York") == pytest.approx(0.8)
    # repeated tokens count once per occurrence: [a,b,b] minus article? "b b" vs "b" → P = 1/2, R = 1
    assert token_f1("b b", "b") == pytest.approx(2 / 3)
    assert token_f1("London", "Paris") == 0.0
    # aliases: best of 0 (vs "G. Stanley Hall": [g, stanley, hall] ∩ [hall] → P=1, R=1/3 → 0.5) and alias "Hall" → 1
    assert token_f1("Hall", ["G. Stanley Hall"]) == pytest.approx(0.5)
    assert token_f1("Hall", ["G. Stanley Hall", "Hall"]) == 1.0


def test_f1_of_empty_texts() -> None:
    assert token_f1("", "") == 1.0
    assert token_f1("the", "a") == 1.0  # both normalise to nothing
    assert token_f1("", "Paris") == 0.0
    assert exact_match("", "Paris") == 0.0


def test_citations_are_stripped_before_scoring() -> None:
    assert strip_citations("Paris [1].") == "Paris."
    assert strip_citations("It was 1952 [2, 3] and [4]") == "It was 1952 and"
    assert exact_match(strip_citations("The Beatles [1]"), "Beatles") == 1.0
