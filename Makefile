# The two commands of the README do all set-up on a fresh machine.
#   make run   create .venv, install optplan, run the default experiment and write its report
#   make test  same set-up, then the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2

.PHONY: install browser run test paper clean mediapipe-wheel

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,tflite,onnx,dask,ray,html,peers]'
	touch $(STAMP)

install: $(STAMP)

RUN_DIR ?= runs/default

run: install
	$(VENV)/bin/optplan run experiments/default.toml --out $(RUN_DIR)
	$(VENV)/bin/optplan report $(RUN_DIR) --out $(RUN_DIR)/report
	$(VENV)/bin/optplan report $(RUN_DIR) --html --out $(RUN_DIR)/report

# The HTML report's test loads the page in headless Chromium: Debian's package, when absent.
APT := $(if $(filter 0,$(shell id -u)),,sudo) apt-get
browser:
	@command -v chromium >/dev/null 2>&1 || { $(APT) update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(APT) install -y -qq chromium >/dev/null; }

# What only the tests need (make run does without): torch (the local CPU wheel), the runtimes
# (ExecuTorch, TFLite Micro, LiteRT), timm without its torchvision dependency, and the MediaPipe
# wheel's .tflite models (downloaded, never installed) where optplan's sources look for them.
TEST_STAMP := $(VENV)/.test-extras-stamp
MEDIAPIPE_WHEELS := $(or $(OPTPLAN_CACHE),$(HOME)/.cache/optplan)/wheels/mediapipe-0.10.21

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[torch,executorch,tflm,litert]'
	$(PY) -m pip install --quiet --no-deps timm==1.0.31
	touch $(TEST_STAMP)

mediapipe-wheel:
	@ls $(MEDIAPIPE_WHEELS)/*.whl >/dev/null 2>&1 || \
	  $(PY) -m pip download --quiet --no-deps --dest $(MEDIAPIPE_WHEELS) mediapipe==0.10.21

test: $(TEST_STAMP) mediapipe-wheel browser
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
