"""The compiled parts of optplan, built by ``pip install`` (metadata: pyproject.toml): the
offsets search's core and its beam search, and the offset planners' placement loop."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("optplan.exact._search_ext", ["optplan/exact/_search_ext.c"],
              depends=["optplan/exact/_ext_common.h"], extra_compile_args=["-O3"]),
    Extension("optplan.exact._beam_ext", ["optplan/exact/_beam_ext.c"],
              depends=["optplan/exact/_ext_common.h"], extra_compile_args=["-O3"]),
    Extension("optplan.heuristics._placement_ext", ["optplan/heuristics/_placement_ext.c"],
              extra_compile_args=["-O3"]),
])
