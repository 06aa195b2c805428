"""The compiled core of the offsets search, built by ``pip install`` (metadata: pyproject.toml)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("optplan.exact._search_ext", ["optplan/exact/_search_ext.c"],
                             extra_compile_args=["-O3"])])
