# trainrt's front door: a thin layer over CMake. `make demo` and `make test` do all set-up.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
TRAINRT := $(BUILD)/trainrt
DATA := data/fashion-mnist.h5
PREFIX ?= /usr/local

.PHONY: test-costs docs bench-goodput bench-glusterfs bench-tune-array all deps deps-core build cli data demo test test-long test-unit test-mpi test-metrics test-slurm test-install install bench bench-nodes clean conformance

all: build

deps:
	bash tools/deps.sh

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# The documentation site (docs/, Sphinx): $(BUILD)/docs/html/index.html. make test checks it.
docs: deps
	bash tools/docs.sh $(BUILD)/docs

# Ray's own examples under Ray (stored: tests/conformance/ray_reference.json), the framework guides'
# scripts under Ray (tests/conformance/ray_guides.json), and the examples under trainrt after
# the port (the table in docs/reference/ray-conformance.md); make test runs the trainrt half of the
# ones expected to conform. CONFORMANCE_SKIP_RAY=1: the trainrt half and the table alone.
conformance: build
	bash tools/conformance.sh

deps-core:
	bash tools/deps.sh core

# The CLI and libtrainrt only: what `make demo` runs (no component, test or benchmark; Debian's
# core packages only). A later `make test` or `make build` configures again with the components.
cli: deps-core
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target trainrt

$(DATA): | cli
	$(TRAINRT) data import fashion-mnist --out $(DATA)

data: build $(DATA)

demo: cli $(DATA)
	bash jobs/demo.sh

# Tests run in parallel: each declares the cores it keeps busy (ctest PROCESSORS), and ctest keeps
# their sum within TEST_JOBS; tests sharing the local cluster's nodes hold a lock (docs/architecture.md).
# 3 on 2 cores: a two-rank test beside a one-core one. Twice the cores (4) filled the cores better
# (98 % busy against 85 %) but ran 26.7-28.2 min against 28.0 and stretched the cluster tests'
# timings (a requeued step's stop, a node failure's ordering): see CHANGELOG.
TEST_JOBS ?= 3
test: data
	cd $(BUILD) && ctest --output-on-failure --timeout 900 -j $(TEST_JOBS) $(CTEST_ARGS)

# tests/costs.txt from the last make test's durations: the order a fresh build directory runs them in.
test-costs:
	awk '/^---/{exit} $$3>=5 {printf "%s %.0f\n",$$1,$$3}' $(BUILD)/Testing/Temporary/CTestCostData.txt | sort -k2,2nr > tests/costs.txt

# The same tests with their slow repeat-runs (every kill phase, more random kills).
test-long: data
	cd $(BUILD) && TRAINRT_TEST_LONG=1 ctest --output-on-failure --timeout 1800 -j $(TEST_JOBS) $(CTEST_ARGS)

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit

test-mpi: build
	cd $(BUILD) && ctest --output-on-failure -L mpi

test-metrics: data
	cd $(BUILD) && ctest --output-on-failure -L metrics

test-slurm: data
	cd $(BUILD) && ctest --output-on-failure -L slurm

test-install: build
	cd $(BUILD) && ctest --output-on-failure -L install

# Installs bin/, lib/, include/, lib/cmake/trainrt, share/trainrt and module files under PREFIX.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: data
	bash bench/run.sh

# Marks stored results as stored now, at HEAD, in bench/results/index.json (bench/results/README.md).
RECORD_RESULTS = python3 bench/reporting/results_index.py record

# Node failure -> training again on the local 3-node cluster (root; ~3 min a fault, 3 of each kind:
# a node frozen, a node killed, the batch host killed);
# stores its results where `make bench` shows them from (bench/results/multinode/latest.jsonl).
bench-nodes: data
	bash bench/multinode/node_failure_bench.sh bench/results/multinode/latest.jsonl $(or $(REPEAT),3)
	$(RECORD_RESULTS) bench/results/multinode/latest.jsonl

# Goodput of a compressed long job on the local 3-node cluster (root; ~30 min): ~20 min of training
# under a 4-minute time limit (requeued each time), one node killed and one frozen on the way;
# prints `trainrt results`' goodput breakdown (bench/results/multinode/goodput.json).
bench-goodput: data
	bash bench/multinode/goodput_bench.sh bench/results/multinode/goodput.json
	$(RECORD_RESULTS) bench/results/multinode/goodput.json

# The checkpoint bench on a GlusterFS volume of this host, each rank through a FUSE client of its
# own (root; ~10 min; bench/results/glusterfs/checkpoint.md).
bench-glusterfs: build
	BUILD=$(BUILD) bash bench/glusterfs/checkpoint_bench.sh bench/results/glusterfs/checkpoint
	$(RECORD_RESULTS) bench/results/glusterfs/checkpoint.md bench/results/glusterfs/checkpoint/*

# The same 16-trial sweep as `trainrt tune` in one allocation and as a Slurm job array, on the local
# 3-node cluster (root; ~10 min), alternated twice (bench/results/tune/job_array.json).
bench-tune-array: data
	BUILD=$(BUILD) bash bench/tune/job_array_bench.sh bench/results/tune/job_array.json
	$(RECORD_RESULTS) bench/results/tune/job_array.json

clean:
	rm -rf $(BUILD)
