# The two commands of the README do all set-up on a fresh machine.
#   make run   create .venv, install optplan, run the default experiment and write its report
#   make test  same set-up, then the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2

.PHONY: install run test paper clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,tflite,onnx,dask,peers]'
	touch $(STAMP)

install: $(STAMP)

RUN_DIR ?= runs/default

run: install
	$(VENV)/bin/optplan run experiments/default.toml --out $(RUN_DIR)
	$(VENV)/bin/optplan report $(RUN_DIR) --out $(RUN_DIR)/report

test: install
	$(PY) -m pytest -n $(PYTEST_WORKERS) -q

# Tables, figures and macros from the committed results in paper/results/; the PDF when a LaTeX
# toolchain is present (Debian: texlive-latex-extra and friends, see paper/README.md).
paper: install
	$(PY) paper/build.py
	@if command -v pdflatex >/dev/null 2>&1; then \
	  cd paper && pdflatex -interaction=nonstopmode -halt-on-error main.tex >/dev/null && \
	  pdflatex -interaction=nonstopmode -halt-on-error main.tex >/dev/null && echo "wrote paper/main.pdf"; \
	else echo "pdflatex not found: paper/generated/ regenerated, PDF skipped"; fi

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
