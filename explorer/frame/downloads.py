"""One download per view: every array a page shows, its tokens, its parameters and the view
itself as one offline web page, in one .zip.

A page calls :func:`download_view` once, with the arrays it draws (named) and the ViewParams;
a part of the page that reruns alone (an ``st.fragment``) hands what it draws to
:func:`download_part` (explorer.frame.download_parts) instead, read on the click.
The file's name carries the parameters (``relpos_logits_n8_k2_d16_h2_seed0_mask-none.zip``);
inside are one CSV per array (a header row of column labels, a row label first on every line,
masked cells empty), ``tokens.csv``, ``params.json`` (every control's value, and the link that
reopens the view: the address bar's query, see :func:`link_of`), ``view.html`` (every chart
of the page, plotly.js inside, see explorer.frame.offline_view) and ``README.txt``.
The zip is built only when the button is clicked. PNGs come from each chart's camera button.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import re
import zipfile
from collections.abc import Callable, Mapping
from urllib.parse import urlencode, urlsplit

import numpy as np
import streamlit as st

from explorer.frame.csv_tables import Labelled, csv_files, csv_text
from explorer.frame.download_parts import Arrays, parts_of_this_view, with_parts
from explorer.frame.download_parts import download_part as download_part  # a page's one import
from explorer.frame.navigation import PAGES
from explorer.frame.offline_view import ShownFigure, figures_of_this_view, view_html
from explorer.frame.params import ViewParams, trained_model_name
from explorer.frame.url_query import DEFAULTS
from explorer.frame.view_url import url_of, view_record

FILE_PREFIX = "relpos"
HTML_NAME = "view.html"


def position_labels(params: ViewParams, start: int = 0, stop: int | None = None) -> list[str]:
    """Labels of positions [start, stop): ``3 the`` with typed text, else ``3``.

    >>> position_labels(ViewParams(text="the cat sat"), 1)
    ['1 cat', '2 sat']
    >>> position_labels(ViewParams(n=3))
    ['0', '1', '2']
    """
    stop = params.length if stop is None else stop
    tokens = params.tokens
    if tokens:
        return [f"{i} {tokens[i]}" for i in range(start, stop)]
    return [str(i) for i in range(start, stop)]


def link_of(page: str, controls: Mapping[str, tuple[object, list[str] | None]]) -> str:
    """The relative link that reopens the view: the page and the query its bound widgets put
    in the address bar (:func:`explorer.frame.view_url.view_record`), no more and no less, so
    every control of every page is in it and a value the address does not hold is not.

    >>> link_of("skew", {"n": (6, ["6"]), "k": (2, None), "skew_step": (3, ["3 reshape"])})
    '/skew?n=6&skew_step=3+reshape'
    """
    query = url_of(controls)
    return f"/{page}" + (f"?{urlencode(query)}" if query else "")


def view_link(params: ViewParams | None, extra: Mapping[str, object], page: str) -> str:
    """Outside a run of the app (no widget drawn, so no address to read): the link the shared
    controls at ``params`` and the controls in ``extra`` would write, defaults left out."""
    query: dict[str, object] = {}
    if params is not None:
        for field in dataclasses.fields(params):
            value = getattr(params, field.name)
            if field.name == "win":
                value = params.window[0]
            if value != DEFAULTS.get(field.name):
                query[field.name] = value
    query.update(
        {
            key: value
            for key, value in extra.items()
            # a shared control at its default is left out, as the app's own URL leaves it out
            if not key.startswith("_") and not (key in DEFAULTS and value == DEFAULTS[key])
        }
    )
    return f"/{page}" + (f"?{urlencode(query)}" if query else "")


def _slug(value: object, limit: int = 24, keep: str = "") -> str:
    return re.sub(rf"[^A-Za-z0-9.{keep}]+", "-", str(value)).strip("-")[:limit] or "x"


def file_name(
    page: str, params: ViewParams | None, extra: Mapping[str, object] | None = None
) -> str:
    """``relpos_<page>_n8_k2_d16_h2_seed0_mask-none[_pad2][_win100][_text-...][_<extra>].zip``.

    >>> file_name("logits", ViewParams())
    'relpos_logits_n8_k2_d16_h2_seed0_mask-none.zip'
    >>> file_name("attention", ViewParams(n=1000, win=100, mask="padding"), {"head": 1})
    'relpos_attention_n1000_k2_d16_h2_seed0_mask-padding_pad2_win100_head1.zip'
    """
    extra = extra or {}
    parts = [FILE_PREFIX, _slug(page)]
    if params is not None:
        parts += [
            f"n{params.length}",
            f"k{params.k}",
            f"d{params.d_model}",
            f"h{params.heads}",
            f"seed{params.seed}",
            f"mask-{params.mask}",
        ]
        if "padding" in params.mask:
            parts.append(f"pad{params.pad}")
        if params.windowed:
            parts.append(f"win{params.window[0]}")
        if params.tokens:
            parts.append("text-" + _slug("-".join(params.tokens[:4])))
    for key, value in extra.items():
        if not key.startswith("_"):
            short = key.removeprefix(f"{page}_")  # trained_seed -> seed
            sep = "" if isinstance(value, int | float) else "-"
            parts.append(f"{_slug(short)}{sep}{_slug(value)}")
    return "_".join(parts) + ".zip"


def zip_bytes(
    page: str,
    params: ViewParams | None,
    arrays: Arrays,
    extra: Mapping[str, object] | None = None,
    *,
    figures: Mapping[str, ShownFigure] | None = None,
    app_url: str | None = None,
    controls: Mapping[str, tuple[object, list[str] | None]] | None = None,
    parts: Mapping[str, Arrays] | None = None,
    files: Callable[[], Mapping[str, bytes]] | None = None,
) -> bytes:
    """The view as one zip: CSVs, tokens.csv, params.json, view.html, README.txt.

    ``figures``: the charts the page drew (view.html draws them); ``app_url``: where the
    browser reached the app, which makes the link back absolute; ``controls``: every bound
    widget the view drew (:func:`explorer.frame.view_url.view_record`), whose values go to
    params.json and whose address is the link; ``parts``: the arrays of the parts that rerun
    alone (explorer.frame.download_parts), written after ``arrays``; ``files``: a page's own
    files beside them (a program and its .npy inputs), name -> bytes, built on the click.
    """
    extra = extra or {}
    arrays = with_parts(arrays, parts)
    meta = _params_json(page, params, extra, app_url, controls)
    readme = [
        f"Relative position attention explorer, page {page}: every array the page shows.",
        f"Reopen this view: {meta.get('url', meta['link'])} (parameters in params.json).",
        "CSV: first row = column labels, first column = row labels; empty cell = masked.",
        "",
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            table = array if isinstance(array, Labelled) else Labelled(np.asarray(array))
            for file, text, line in csv_files(_slug(name, 60, keep="_"), table):  # t5_bias.csv
                archive.writestr(file, text)
                readme.append(line)
        if params is not None:
            tokens = params.tokens or tuple(f"q{i}" for i in range(params.length))
            positions = Labelled(np.arange(len(tokens)), rows=list(tokens), cols=["position"],
                                 corner="token")  # fmt: skip
            archive.writestr("tokens.csv", csv_text(positions))
            readme.append("tokens.csv: the token at each position (q0, q1, ... when none typed).")
        archive.writestr("params.json", json.dumps(meta, indent=2))
        readme.append("params.json: the parameters of this view and its link.")
        shown = list((figures or {}).values())  # one copy: a fragment's rerun may add charts
        about = next((p for p in PAGES if p.stem == page), None)
        html = view_html(
            title=about.title if about else page,
            about=about.what if about else "",
            parameters=meta,
            link=meta.get("url", meta["link"]),
            figures=shown,
        )
        archive.writestr(HTML_NAME, html)
        readme.append(
            f"{HTML_NAME}: the page's {len(shown)} chart(s) with their formulas and captions, "
            "the parameters and the link back, as one web page that opens offline (plotly.js "
            "inside)."
        )
        for file, data in (files() if files else {}).items():
            archive.writestr(file, data)
            readme.append(f"{file}: written by the page (see the page for what it holds).")
        archive.writestr("README.txt", "\n".join(readme) + "\n")
    return buffer.getvalue()


def _params_json(
    page: str,
    params: ViewParams | None,
    extra: Mapping[str, object],
    app_url: str | None = None,
    controls: Mapping[str, tuple[object, list[str] | None]] | None = None,
) -> dict[str, object]:
    data: dict[str, object] = {"page": page}
    if params is not None:
        data.update(dataclasses.asdict(params))
        # n is the length in use: a typed sentence's token count, whatever the slider held
        data.update(
            n=params.length,
            length=params.length,
            head_dim=params.head_dim,
            window=list(params.window),
        )
        if params.trained:  # which shipped model (relpos_lab.family.load) drew the view
            data["model"] = trained_model_name(params.k)
    data.update({key.lstrip("_"): value for key, value in extra.items()})
    if controls is None:
        data["link"] = view_link(params, extra, page)
    else:
        for key, (value, _) in controls.items():  # every control of the page, defaults too
            data.setdefault(key, value)
        data["link"] = link_of(page, controls)
    if app_url:
        data["url"] = app_url + data["link"]
    return json.loads(json.dumps(data, default=str))


def app_address(page: str) -> str | None:
    """``scheme://host[/base path]`` where the browser reached the app (None outside a
    browser): the address in ``st.context.url`` less the page's own path."""
    url = st.context.url
    if not url:
        return None
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith(f"/{page}"):
        path = path[: -len(page) - 1]
    return f"{parts.scheme}://{parts.netloc}{path}"


def download_view(
    page: str,
    params: ViewParams | None,
    arrays: Arrays,
    *,
    extra: Mapping[str, object] | None = None,
    where=None,
    files: Callable[[], Mapping[str, bytes]] | None = None,
) -> None:
    """The page's one download button (in the sidebar unless ``where`` is given).

    ``page``: the page's URL path (``"logits"``). ``arrays``: name -> what the page shows, as
    :class:`Labelled` (with axis labels) or a bare array; what a fragment draws goes through
    :func:`download_part`. ``extra``: what names the view besides its widgets
    (``{"head": 1}``), added to the file name and params.json; a key starting with ``_``
    goes to params.json only. Every widget of the view, shared or the
    page's own, is in params.json and the link without being listed here. Inside an
    ``st.fragment`` pass ``where=st`` (a fragment cannot write to the sidebar). ``files``:
    returns the page's own files for the zip (name -> bytes), called on the click.
    """
    extra = dict(extra or {})
    name = file_name(page, params, extra)
    target = st.sidebar if where is None else where
    build = functools.partial(
        zip_bytes,
        page,
        params,
        dict(arrays),
        extra,
        # the view's own chart list, read on the click: charts drawn after this call count too
        figures=figures_of_this_view(),
        app_url=app_address(page),
        # the view's own record of its widgets, read on the click: widgets drawn after this
        # call count too, and the link is the address bar's query
        controls=view_record(),
        # the parts that rerun alone, read on the click: what they show then
        parts=parts_of_this_view(),
        files=files,
    )
    target.download_button(
        "Download this view (.zip)",
        build,
        file_name=name,
        mime="application/zip",
        # a click only builds and saves the file: no rerun of the page racing the build (the
        # rerun would also replace this button's callable)
        on_click="ignore",
        key=f"download_{page}",
        icon=":material/download:",
        help=f"{name}: one CSV per array shown ({', '.join(arrays)}), the tokens, the "
        f"parameters as JSON, {HTML_NAME} (every chart of the page, which opens offline in a "
        "browser) and a README. Each chart's camera button saves it as PNG.",
    )
