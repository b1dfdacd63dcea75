# mlsysim_nb: `make lab` opens the course (the student version, student/), `make test` runs every test.
# Both create the virtual environment .venv first (Python 3.11+ as $(PYTHON)).
# `make lab COURSE=notebooks` opens the instructor's version (solutions and outputs included).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# the book is built in an environment of its own: its extra brings nbgrader (the student version of each
# chapter is made with nbgrader's own preprocessors), whose menus must not appear in the students' lab
BOOK_VENV ?= .venv-book
BOOK_BIN  := $(BOOK_VENV)/bin
PORT   ?= 8888
COURSE ?= student
# PYTEST_ARGS: extra pytest options for `make test`, e.g. PYTEST_ARGS=--durations=20
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg

.PHONY: lab test env test-env course-env book-env lint unit nbval notebooks assignments student rubrics book book-solutions count-runs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# the package and JupyterLab: enough to take the course
$(VENV)/.lab-installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[lab]"
	touch $@

# the package, JupyterLab and nbgrader: enough to generate and grade the assignments
$(VENV)/.course-installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[course]"
	touch $@

# the package, Sphinx, MyST-NB, the book theme and nbgrader, in .venv-book: enough to build the course's
# site (make book), and never in the .venv that `make lab` opens
$(BOOK_BIN)/python:
	$(PYTHON) -m venv $(BOOK_VENV)
	$(BOOK_BIN)/python -m pip install --quiet --upgrade pip

$(BOOK_VENV)/.book-installed: $(BOOK_BIN)/python pyproject.toml
	$(BOOK_BIN)/python -m pip install --quiet -e ".[book]"
	touch $@

# everything the test suite needs (reference oracle, nbval, nbgrader, playwright, linters, PyTorch for the
# lab, Sphinx for the site)
$(VENV)/.test-installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[lab,course,test,browser,lint,measure,book]"
	touch $@

env: $(VENV)/.lab-installed
course-env: $(VENV)/.course-installed
book-env: $(BOOK_VENV)/.book-installed
test-env: $(VENV)/.test-installed

lab: $(VENV)/.lab-installed
	@ROOT=""; if [ "$$(id -u)" = 0 ]; then ROOT="--allow-root"; fi; \
	$(BIN)/jupyter lab --notebook-dir=$(COURSE) --port=$(PORT) $$ROOT

# lint: ruff (rules and formatting), mypy on the package, notebook hygiene
lint: $(VENV)/.test-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m mlsysim_nb.course.hygiene notebooks

# the fast layers: unit, property and differential tests and doctests (no browser, Binder or notebooks)
unit: $(VENV)/.test-installed
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not browser and not binder" \
		tests/unit tests/property tests/differential mlsysim_nb README.md

# everything: lint first, then every test layer (unit, property, differential, notebooks under
# nbval, the Binder environment, browser, the course's site in tests/book)
test: lint
	$(BIN)/python -m pytest -p no:cacheprovider -n 2 --dist loadfile $(NBVAL) $(PYTEST_ARGS)

# the notebooks alone, under nbval (strict: every stored output is compared)
nbval: $(VENV)/.test-installed
	$(BIN)/python -m pytest -p no:cacheprovider $(NBVAL) notebooks

# re-execute the notebooks top to bottom and store their outputs (after editing one), then regenerate student/
notebooks: $(VENV)/.test-installed
	$(BIN)/python -m mlsysim_nb.course.execute
	$(BIN)/python -m mlsysim_nb.course.hygiene notebooks
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m mlsysim_nb.course.release build/course --student student

# the graders' sheets, build/rubrics/NN_name.md: the answer key of the autograded items (computed by the
# package from the hidden tests), and each hand-graded answer's question, rubric and model answer
rubrics: $(VENV)/.course-installed
	$(BIN)/python -m mlsysim_nb.course.rubrics build/rubrics

# the student release with nbgrader: build/course/release/NN_name/ (solutions and hidden tests removed)
assignments: $(VENV)/.course-installed
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m mlsysim_nb.course.release build/course

# the same release copied into student/ (what `make lab` and Binder open): run it after editing a notebook
student: $(VENV)/.course-installed
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m mlsysim_nb.course.release build/course --student student

# the course as a static site, the student version (no solutions), from the notebooks' stored outputs:
# build/book/index.html. Nothing is executed. book-solutions: the instructor's version, for private publishing.
book: $(BOOK_VENV)/.book-installed
	$(BOOK_BIN)/python -m mlsysim_nb.course.book build/book

book-solutions: $(BOOK_VENV)/.book-installed
	$(BOOK_BIN)/python -m mlsysim_nb.course.book build/book-solutions --solutions

# how many times one `make test` executes each notebook (every kernel started is counted)
count-runs: $(VENV)/.test-installed
	$(BIN)/python -m mlsysim_nb.course.count_runs -- $(MAKE) test

bench: $(VENV)/.test-installed
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) $(BOOK_VENV) .pytest_cache .hypothesis build dist *.egg-info
