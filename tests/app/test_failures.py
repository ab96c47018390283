"""A fragment that fails shows the same message a whole page does (explorer.frame.failures), not
Streamlit's own error box, which Community Cloud redacts to "This app has encountered an error"."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def fragment_page() -> None:
    import streamlit as st

    from explorer.frame.failures import fragment

    @fragment
    def refused() -> None:
        st.write("before")
        raise ValueError("skew needs about 32.1 MiB of memory, and this server has 9.4 MiB free")

    @fragment
    def broken() -> None:
        raise KeyError("a bug")

    refused()
    broken()
    st.write("the rest of the page")


def test_a_fragments_failure_is_shown_in_words_and_the_page_goes_on():
    at = AppTest.from_function(fragment_page).run()
    assert not at.exception
    messages = [box.value.replace("\\", "") for box in at.error]  # markdown escapes
    assert messages[0].startswith("That view cannot be drawn: skew needs about 32.1 MiB")
    assert messages[1].startswith("Something went wrong while drawing this page")
    assert [m.value for m in at.markdown] == ["before", "the rest of the page"]
