"""Sphinx configuration of trainrt's documentation site (`make docs`; tools/docs.sh).

Pages are Markdown (MyST). The C++ API reference is Doxygen's XML of include/trainrt/, read by
Breathe: tools/docs.sh runs Doxygen into TRAINRT_DOXYGEN_XML before Sphinx."""
import os

project = "trainrt"
author = "the trainrt developers"
copyright = "the trainrt developers"
extensions = ["myst_parser", "breathe"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "Doxyfile"]
html_theme = "furo"
html_title = "trainrt"
# Headings up to ### get anchors, so that [text](page.md#a-heading) links resolve and are checked.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
breathe_projects = {"trainrt": os.environ.get("TRAINRT_DOXYGEN_XML", "_doxygen/xml")}
breathe_default_project = "trainrt"
# C++ signatures Sphinx's C++ domain cannot parse or link (templates of the standard library)
# would be warnings; every other warning fails the build (tools/docs.sh passes -W).
nitpicky = False
