"""The one keymap (ui/kit/keymap.py): each panel's key line and the help overlay say the keys its script
implements; a panel with fewer moves is never told the moves it does not have."""

from __future__ import annotations

from ui.kit.keymap import MOVES, PANEL_KEYS, PANEL_MOVES, help_html, keys_line, moves_of


def test_a_step_match_rater_reads_its_own_keys_and_no_move_it_lacks() -> None:
    line = keys_line("Step-match study")
    assert "**m / n** match / no match" in line
    assert "**s  or  Ctrl+Enter** save" in line and "**x** skip" in line and "**?** this help" in line
    assert "next item" not in line and "previous" not in line and "jump" not in line


def test_the_overlay_gives_the_study_its_own_table_and_names_it_apart_from_the_shared_moves() -> None:
    overlay = help_html()
    assert "Keys (every annotation panel, except the Step-match study)" in overlay
    study = overlay[overlay.index("<h4>Step-match study</h4>") :].split("<h4>", 2)[1]
    assert "<kbd>m / n</kbd></td><td>match / no match" in study
    assert "<kbd>x</kbd>" in study and "<kbd>n</kbd>" not in study


def test_every_panel_names_moves_that_exist_and_the_others_offer_them_all() -> None:
    keys = [key for key, _ in MOVES]
    for panel, offered in PANEL_MOVES.items():
        assert set(offered) <= set(keys), f"{panel} names a move the keymap does not have"
        assert panel in PANEL_KEYS, f"{panel} lists its moves in the overlay with its own keys"
    assert moves_of("Earliest error") == MOVES
