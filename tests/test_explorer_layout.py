"""explorer/ is grouped by what each part serves, in layers: frame < weights < pair < figures <
stories. A module imports explorer modules of its own layer or a lower one, a story imports no
other story, and few modules sit loose at explorer/'s top level.

The rules read the source with ``ast`` (nothing is imported), so the same check runs on a copy of
the tree with a bad import put in, to show that it catches one.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import explorer

PACKAGE = Path(explorer.__file__).resolve().parent
LAYERS = ("frame", "weights", "pair", "figures", "stories")  # lowest first
LOOSE_MAX = 8  # .py files directly in explorer/ besides __init__.py
NOT_CODE = {"assets", "__pycache__"}


def module_name(path: Path, root: Path) -> str:
    """``explorer/stories/family/views.py`` -> ``explorer.stories.family.views`` (a package is
    named by its folder)."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def explorer_imports(path: Path, root: Path) -> set[str]:
    """The explorer modules (or packages) ``path`` imports, relative imports resolved.

    ``from explorer.stories import family`` counts as ``explorer.stories.family`` when that is a
    module or package of the tree, else (a name defined in the package) as ``explorer.stories``.
    """
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                inner = f"{module}.{alias.name}"
                found.add(inner if is_module(inner, root) else module)
    return {m for m in found if m == root.name or m.startswith(root.name + ".")}


def is_module(dotted: str, root: Path) -> bool:
    """Whether ``explorer.a.b`` names a module or package in the tree under ``root``."""
    where = root.joinpath(*dotted.split(".")[1:])
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def place(module: str) -> tuple[int, str | None]:
    """A module's rank (its layer's index; the package root below every layer, a loose module
    above every one) and, inside stories, the story it belongs to."""
    parts = module.split(".")[1:]
    if not parts:
        return -1, None
    if parts[0] not in LAYERS:
        return len(LAYERS), None  # loose: nothing in a layer may lean on it
    story = parts[1] if parts[0] == "stories" and len(parts) > 1 else None
    return LAYERS.index(parts[0]), story


def layout_problems(root: Path) -> list[str]:
    """Every way the tree under ``root`` (an explorer/ folder) breaks the layering."""
    problems = []
    folders = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in NOT_CODE)
    problems += [
        f"{name}/ is not one of the layers {LAYERS}" for name in folders if name not in LAYERS
    ]
    loose = sorted(p.name for p in root.glob("*.py") if p.name != "__init__.py")
    if len(loose) > LOOSE_MAX:
        problems.append(
            f"{len(loose)} modules loose at explorer/'s top (at most {LOOSE_MAX}): {loose}"
        )
    for path in sorted(root.rglob("*.py")):
        if NOT_CODE & set(path.relative_to(root).parts):
            continue
        source = module_name(path, root)
        rank, story = place(source)
        for target in sorted(explorer_imports(path, root)):
            target_rank, target_story = place(target)
            if target_rank > rank:
                problems.append(f"{source} (a lower layer) imports {target}")
            elif rank == target_rank == LAYERS.index("stories") and target_story not in (
                None,
                story,
            ):
                problems.append(f"{source} imports {target}, another story")
    return problems


def test_explorer_keeps_its_layers():
    assert layout_problems(PACKAGE) == []


def test_every_story_and_layer_is_a_package():
    for folder in [*(PACKAGE / layer for layer in LAYERS), *(PACKAGE / "stories").iterdir()]:
        if folder.is_dir() and folder.name not in NOT_CODE:
            assert (folder / "__init__.py").is_file(), f"{folder.name}/ has no __init__.py"


def copy_of_explorer(tmp_path: Path) -> Path:
    copy = tmp_path / "explorer"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns(*NOT_CODE))
    return copy


def add_line(path: Path, line: str) -> None:
    path.write_text(path.read_text() + "\n" + line + "\n")


def test_the_check_catches_an_import_up_the_layers(tmp_path):
    copy = copy_of_explorer(tmp_path)
    add_line(copy / "frame" / "params.py", "from explorer.figures import heatmaps")
    add_line(copy / "weights" / "example.py", "from ..pair import definition")
    add_line(copy / "figures" / "draw.py", "import explorer.stories.family.settings")
    assert layout_problems(copy) == [
        "explorer.figures.draw (a lower layer) imports explorer.stories.family.settings",
        "explorer.frame.params (a lower layer) imports explorer.figures.heatmaps",
        "explorer.weights.example (a lower layer) imports explorer.pair.definition",
    ]


def test_the_check_catches_one_story_importing_another(tmp_path):
    copy = copy_of_explorer(tmp_path)
    add_line(
        copy / "stories" / "shift" / "rel_shift.py", "from explorer.stories.family import views"
    )
    add_line(
        copy / "stories" / "shift" / "skew.py", "from explorer.stories.shift import skew_figures"
    )
    assert layout_problems(copy) == [
        "explorer.stories.shift.rel_shift imports explorer.stories.family.views, another story",
    ]


def test_the_check_catches_a_flat_pile_and_a_stray_folder(tmp_path):
    copy = copy_of_explorer(tmp_path)
    already = len([p for p in copy.glob("*.py") if p.name != "__init__.py"])  # explorer.shell
    for i in range(LOOSE_MAX + 1):
        (copy / f"loose_{i}.py").write_text('"""A module outside every layer."""\n')
    add_line(copy / "stories" / "speed" / "views.py", "from explorer import loose_0")
    (copy / "misc").mkdir()
    problems = layout_problems(copy)
    assert problems[0].startswith("misc/ is not one of the layers")
    assert problems[1].startswith(f"{LOOSE_MAX + 1 + already} modules loose at explorer/'s top")
    assert problems[2:] == ["explorer.stories.speed.views (a lower layer) imports explorer.loose_0"]


PAGES = PACKAGE.parent / "pages"
MODULE_MAX_LINES = 300  # any module of explorer/ or pages/
PAGE_MAX_LINES = 150  # a page reads its controls, asks its story for views and draws


def size_problems(explorer_root: Path, pages_root: Path) -> list[str]:
    """Modules too long to read at a sitting: any over MODULE_MAX_LINES, a page over
    PAGE_MAX_LINES."""
    problems = []
    for root, most in ((explorer_root, MODULE_MAX_LINES), (pages_root, PAGE_MAX_LINES)):
        for path in sorted(root.rglob("*.py")):
            lines = len(path.read_text().splitlines())
            if lines > most:
                problems.append(f"{path.relative_to(root.parent)}: {lines} lines (at most {most})")
    return problems


def page_problems(pages_root: Path) -> list[str]:
    """What a page decides that belongs lower down: reading the experiments (``relpos_lab``)
    itself, or branching on trained against random weights (``.trained``), which the weights
    source decides once."""
    problems = []
    for path in sorted(pages_root.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                names = []
            if any(name == "relpos_lab" or name.startswith("relpos_lab.") for name in names):
                problems.append(f"{path.name}:{node.lineno} imports relpos_lab")
            if isinstance(node, ast.Attribute) and node.attr == "trained":
                problems.append(f"{path.name}:{node.lineno} branches on .trained")
    return problems


def test_modules_and_pages_are_short():
    assert size_problems(PACKAGE, PAGES) == []


def test_pages_leave_experiments_and_the_weights_choice_to_lower_layers():
    assert page_problems(PAGES) == []


def test_the_page_checks_catch_a_long_module_and_a_page_that_decides(tmp_path):
    explorer_copy = copy_of_explorer(tmp_path)
    pages = tmp_path / "pages"
    shutil.copytree(PAGES, pages, ignore=shutil.ignore_patterns("__pycache__"))
    add_line(explorer_copy / "figures" / "notes.py", "\n" * MODULE_MAX_LINES)
    add_line(pages / "lookup.py", "from relpos_lab.family import load")
    add_line(pages / "lookup.py", "unit = 'character' if params.trained else 'position'")
    (pages / "long.py").write_text("x = 1\n" * (PAGE_MAX_LINES + 1))
    sizes = size_problems(explorer_copy, pages)
    assert [s.split(":")[0] for s in sizes] == ["explorer/figures/notes.py", "pages/long.py"]
    decided = page_problems(pages)
    assert [p.split(" ", 1)[1] for p in decided] == ["imports relpos_lab", "branches on .trained"]
