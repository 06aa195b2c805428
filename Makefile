# The two commands of the README do all set-up on a fresh machine.
#   make run   create .venv, install optplan, run the default experiment and write its report
#   make test  same set-up, then the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2

.PHONY: install browser run test paper paper-deps paper-runs clean mediapipe-wheel

$(STAMP): pyproject.toml setup.py $(wildcard optplan/*/*.c)
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

test: $(TEST_STAMP) mediapipe-wheel browser paper-deps
	$(PY) -m pytest -n $(PYTEST_WORKERS) -q

# The paper: tables, figures and macros from the committed results in paper/results/, then
# the PDF when TeX Live has what it needs (make paper installs nothing; make paper-deps does).
TEX_PACKAGES := texlive-publishers texlive-latex-recommended texlive-latex-extra \
                texlive-fonts-recommended lmodern poppler-utils
LATEX := pdflatex -interaction=nonstopmode -halt-on-error

paper: install
	$(PY) paper/build.py
	@if command -v pdflatex >/dev/null 2>&1 && kpsewhich acmart.cls >/dev/null 2>&1; then \
	  cd paper && $(LATEX) main.tex >/dev/null && bibtex main >/dev/null && \
	  $(LATEX) main.tex >/dev/null && $(LATEX) main.tex >/dev/null && echo "wrote paper/main.pdf"; \
	else echo "TeX Live with acmart not found (Debian: $(TEX_PACKAGES); make paper-deps):" \
	  "paper/generated/ regenerated, PDF skipped"; fi

# TeX Live for the PDF and its tests (Debian, as root): about 2 min and 415 MiB.
paper-deps:
	@if command -v pdflatex >/dev/null 2>&1 && kpsewhich acmart.cls >/dev/null 2>&1 \
	  && command -v pdffonts >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing TeX Live for the paper: $(TEX_PACKAGES)"; \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
	    --no-install-recommends $(TEX_PACKAGES) >/dev/null; \
	else echo "not root or no apt-get: install $(TEX_PACKAGES) to build and test the PDF"; fi

# Every experiment behind the paper, one after the other, into paper/results/ (resumes; with
# PAPER_FRESH=1 each run directory is removed first). See paper/README.md for the duration.
# The peers run needs MINIMALLOC_BIN (a MiniMalloc binary built from its source, never
# vendored here) and is left out without it; the runtimes' rows come from bench/runtimes.py.
PAPER_CONFIGS ?= paper paper_inplace paper_generated minimalloc paper_ablation \
                 paper_search_ablation preload slicing order $(if $(MINIMALLOC_BIN),peers,)
paper-runs: install
	@$(if $(MINIMALLOC_BIN),,echo "MINIMALLOC_BIN not set: the peers run is left as it is";)
	@for config in $(PAPER_CONFIGS); do \
	  if [ -n "$(PAPER_FRESH)" ]; then rm -rf paper/results/$$config; fi; \
	  $(VENV)/bin/optplan run experiments/$$config.toml --out paper/results/$$config \
	    --no-progress || exit 1; \
	done
	$(PY) paper/prune.py $(addprefix paper/results/,$(PAPER_CONFIGS))

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
