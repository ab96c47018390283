"""Speed & memory: what each method materializes as n grows, and a benchmark run on this server."""

import streamlit as st

from explorer.figures.draw import plotly_chart, png_config
from explorer.figures.lines import horizontal_line, loglog_figure, mark_points
from explorer.figures.tables import markdown_table
from explorer.frame.budget import REQUEST_BUDGET_BYTES, format_bytes
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.screen import is_phone
from explorer.frame.widgets import choice, choices, int_slider
from explorer.stories.speed import benchmark, notes, views
from explorer.weights.source import no_model_caption

RESULTS_KEY = "speed_results"  # this session's measurements, never shared with other sessions
params = current_params()
d, heads, k = params.head_dim, params.heads, params.k

st.title("Speed & memory")
st.caption(
    no_model_caption(
        "its memory lines are `relpos_core.memory_bytes`, a formula in n, d, heads and k; its "
        "timings run each method on random inputs (q, k, v standard normal and random w^K, w^V "
        "tables, `relpos_lab.bench.make_inputs`), whose values do not change the times"
    )
)
st.markdown(
    "Every exact method computes the same logits; they differ in what they build on the way. "
    "The materialized a^K (einsum, matmul) grows as n² d, the skew's Er as n d, the bucket "
    "gather's Q w^T as h n (2k+1); every method but *banded* also keeps the (b, h, n, n) logits."
)

st.subheader("Memory of the position-dependent intermediate")
curves = views.memory_curves(d, heads, k)
fig = loglog_figure(
    curves,
    title=f"bytes vs n at d = {d}, heads = {heads}, k = {k}, batch 1, float32",
    y_title="bytes",
    dashed=("matmul", "fp32 logits (b, h, n, n)"),
    byte_ticks=True,
)
music = "Music Transformer, n = 2048, d_model = 512"
mark_points(fig, views.music_transformer_points(), name=music)
horizontal_line(
    fig, REQUEST_BUDGET_BYTES, f"per-request budget {format_bytes(REQUEST_BUDGET_BYTES)}"
)
if is_phone():  # a legend beside the plot would leave it no width
    fig.update_layout(legend={"orientation": "h", "x": 0, "y": -0.35}, height=640)
plotly_chart(fig, key="chart_speed_memory", width="stretch", config=png_config("memory"))
st.caption(
    "Lines: `relpos_core.memory_bytes` at this view's d, heads and k (einsum and matmul "
    "coincide). The loop's flat line is the least memory but n² Python steps, by far the "
    "slowest (Measure now). Stars: Huang et al.'s example at n = 2048, d_model = 512 (their L "
    "and D, every head together), causal: the materialized a^K takes 8.6 GB per layer, the "
    "skew's Er 4.2 MB. Dotted: "
    "the memory budget one request of this server may use."
)
st.info(notes.memory_note(curves, REQUEST_BUDGET_BYTES), icon=":material/lightbulb:")

st.subheader("Measure now")
st.markdown(
    f"Times one forward pass of relative attention (key and value terms) per method on this "
    f"server, at d = {d}, heads = {heads}, k = {k} (the sidebar), b = 1, with the inputs of "
    "`relpos_lab.bench`: after a warm-up, the methods take turns call by call; the chart shows "
    "the median and, as bars, the interquartile range of the repeats. *sdpa* and *plain* are "
    "attention without relative terms, the yardsticks. A click runs for at most "
    f"{benchmark.BENCH_SECONDS:.0f} s; the results stay in this browser session only."
)
methods = choices("methods", benchmark.BENCH_METHODS, "speed_methods")  # a row of its own
middle, right = st.columns(2)
with middle:
    largest = choice(
        "largest n", benchmark.BENCH_NS, "speed_max_n", kind="select_slider", default=512,
        help="sizes: powers of 2 up to it",
    )  # fmt: skip
with right:
    repeats = int_slider(
        "repeats",
        3,
        benchmark.BENCH_REPEATS_MAX,
        "speed_repeats",
        benchmark.BENCH_REPEATS_DEFAULT,
        help="Timed calls per method and n, after the warm-up; the spread needs a few.",
    )
ns = tuple(n for n in benchmark.BENCH_NS if n <= largest)[-6:]  # the six largest sizes up to it
allowed, refused = benchmark.plan_benchmark(tuple(methods), ns, d, heads, k)
if refused:
    st.warning(
        "Over the memory budget, refused before anything is allocated:\n"
        + views.refusal_text(refused),
        icon=":material/block:",
    )
if st.button("Measure now", key="speed_measure", type="primary", disabled=not allowed):
    with benchmark.exclusive_measurement() as ours:
        if not ours:
            st.info(
                "Another session is measuring on this server right now, and two measurements "
                "at once would only time each other. Try again in a few seconds.",
                icon=":material/hourglass_top:",
            )
        else:
            bar = st.progress(0.0, text="starting")
            st.session_state[RESULTS_KEY] = benchmark.run_benchmark(
                tuple(methods), ns, d, heads, k, repeats, bar.progress
            )
            bar.empty()

result = st.session_state.get(RESULTS_KEY)
if isinstance(result, views.BenchResult) and result.rows:
    fig = loglog_figure(
        views.timing_curves(result),
        title=f"ms vs n at d = {result.d}, heads = {result.heads}, k = {result.k}: median and "
        f"interquartile range of {result.repeats} repeats",
        y_title="time per forward pass (ms)",
        dashed=("sdpa", "plain"),
        hovertemplate="%{fullData.name}<br>n=%{x}<br>median %{y:.3g} ms<extra></extra>",
    )
    views.add_spread_bars(fig, result)
    plotly_chart(fig, key="chart_speed_timing", width="stretch", config=png_config("timing"))
    st.markdown(markdown_table(views.result_table(result)))
    st.info(notes.timing_note(result.rows), icon=":material/lightbulb:")
    note = (
        f"Measured in {result.seconds:.1f} s on this server just now: median (first quartile-"
        f"third quartile) in ms; load average {result.load[0]:.1f} before and {result.load[1]:.1f} "
        f"after, on {result.cores} core(s). Other work on the same machine (other sessions "
        "too) slows these down: compare within one click."
    )
    if result.skipped:
        skipped = ", ".join(f"{m} at n = {n}" for m, n in result.skipped)
        note += f" Skipped to stay within {benchmark.BENCH_SECONDS:.0f} s: {skipped}."
    st.caption(note)
    for warning in views.noise_notes(result):
        st.warning(warning, icon=":material/speed:")
elif isinstance(result, views.BenchResult):
    st.info("Nothing was measured: every requested size was refused or skipped.")

download_view(  # the view's parameters: its link reopens the same d, heads and k
    "speed",
    params,
    views.download_arrays(curves, result if isinstance(result, views.BenchResult) else None),
    extra={  # the Measure now settings go to params.json only: the link carries the chart's view
        "_speed_methods": list(methods),
        "_speed_max_n": largest,
        "_speed_repeats": repeats,
        "_memory_dtype": "float32",
    },
)
