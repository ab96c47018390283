"""Entry point of the relative-position attention explorer (placeholder until the app lands)."""

import streamlit as st

st.set_page_config(page_title="Relative position attention explorer", layout="wide")
st.title("Relative position attention explorer")
st.write("Relative position representations in self-attention (Shaw 2018, Huang 2018).")
