# The two commands of the README do all set-up on a fresh machine.
#   make run   create .venv, install optplan, run the default experiment end to end
#   make test  same set-up, then the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2

.PHONY: install run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,tflite,onnx,dask]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(VENV)/bin/optplan compare data/examples/*.json --problem shared-objects
	$(VENV)/bin/optplan compare data/examples/*.json --problem offsets

test: install
	$(PY) -m pytest -n $(PYTEST_WORKERS) -q

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
