"""AppTest entry: runs the repo's app.py from a folder with no ``pages/`` next to it.

With a sibling ``pages/`` folder, ``AppTest.switch_page`` falls into legacy multipage mode and
runs a page without app.py (so without the shared sidebar). Running app.py through this proxy
keeps ``st.navigation`` in charge; app.py registers its pages by absolute path.
"""

import runpy
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # `streamlit run app.py` puts the app's folder there
    sys.path.insert(0, str(REPO_ROOT))
runpy.run_path(str(REPO_ROOT / "app.py"), run_name="__main__")
