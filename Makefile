# evalrun-operator Makefile. Everything is built from the Go module proxy and cached under bin/.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

ROOT := $(shell pwd)
GO ?= go
# Kubernetes version derived from go.mod (k8s.io/api v0.Y.Z -> v1.Y.Z).
K8S_VERSION := $(shell $(GO) list -m -f '{{.Version}}' k8s.io/api | sed 's/^v0\./v1./')
K8S_BIN := $(ROOT)/bin/k8s/$(K8S_VERSION)
export KUBEBUILDER_ASSETS := $(K8S_BIN)
# SeaweedFS's weed, the real S3-compatible server of the object store tests (pinned by hack/seaweedfs/go.mod).
SEAWEEDFS_VERSION := $(shell cd hack/seaweedfs && $(GO) list -m -f '{{.Version}}' github.com/seaweedfs/seaweedfs)
export EVALRUN_WEED := $(ROOT)/bin/seaweedfs/$(SEAWEEDFS_VERSION)/weed
GOLANGCI_LINT_VERSION := $(shell cd hack/tools && $(GO) list -m -f '{{.Version}}' github.com/golangci/golangci-lint/v2)
GOLANGCI_LINT := $(ROOT)/bin/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)
# kube-api-linter's golangci-lint build (its cmd/golangci-lint-kube-api-linter), keyed by both versions it is made of.
KUBE_API_LINTER_VERSION := $(shell cd hack/tools && $(GO) list -m -f '{{.Version}}' sigs.k8s.io/kube-api-linter)
KUBE_API_LINTER := $(ROOT)/bin/tools/golangci-lint-kube-api-linter-$(KUBE_API_LINTER_VERSION)-golangci-lint-$(GOLANGCI_LINT_VERSION)
CONTROLLER_GEN := $(GO) tool controller-gen
# helm (charts/evalrun-operator: `helm lint`, `helm template` in the chart's test), pinned by hack/helm/go.mod.
HELM_VERSION := $(shell cd hack/helm && $(GO) list -m -f '{{.Version}}' helm.sh/helm/v4)
export EVALRUN_HELM := $(ROOT)/bin/tools/helm-$(HELM_VERSION)
# Prometheus (promtool checks and unit-tests the shipped alerts; prometheus runs in the e2e monitoring test) and the
# Prometheus Operator, pinned by hack/prometheus/go.mod and hack/prometheus-operator/go.mod.
PROMETHEUS_VERSION := $(shell cd hack/prometheus && $(GO) list -m -f '{{.Version}}' github.com/prometheus/prometheus)
export EVALRUN_PROMTOOL := $(ROOT)/bin/prometheus/$(PROMETHEUS_VERSION)/promtool
# The images dist/install.yaml (make build-installer) deploys: the manager, and the collector it gives the run pods
# (--collector-image). A tag or a digest: IMG=registry.example/evalrun/manager@sha256:<hex>.
IMG ?= localhost/evalrun/manager:dev
COLLECTOR_IMG ?= localhost/evalrun/collector:dev
JUDGE_IMG ?= localhost/evalrun/judge:dev

.PHONY: all
all: build

##@ General
.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
.PHONY: generate
generate: ## Generate deepcopy code and the status apply configurations.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt applyconfiguration:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: ## Generate the CRDs and the manager's RBAC role; copy the CRDs into the Helm chart.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths=./api/... paths=./internal/manager/... output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	rm -f charts/evalrun-operator/crds/*.yaml
	cp config/crd/bases/*.yaml charts/evalrun-operator/crds/

.PHONY: gitops
gitops: ## Write config/gitops/argocd/argocd-cm.yaml (the argocd-cm patch) from health.lua.
	hack/argocd-cm.sh

.PHONY: fmt
fmt: ## go fmt.
	$(GO) fmt ./...

.PHONY: vet
vet: ## go vet.
	$(GO) vet ./...

.PHONY: verify
verify: generate manifests gitops ## Regenerate everything and fail on drift or untracked generated files.
	$(GO) mod tidy -diff
	cd hack/tools && $(GO) mod tidy -diff
	cd hack/helm && $(GO) mod tidy -diff
	cd hack/seaweedfs && $(GO) mod tidy -diff
	cd hack/kueue && $(GO) mod tidy -diff
	cd hack/kube-network-policies && $(GO) mod tidy -diff
	cd hack/prometheus && $(GO) mod tidy -diff
	cd hack/prometheus-operator && $(GO) mod tidy -diff
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@git diff --exit-code -- api config charts || { echo "generated files drifted: run 'make generate manifests' and commit"; exit 1; }
	@untracked="$$(git ls-files --others --exclude-standard -- api config charts)"; \
	  if [ -n "$$untracked" ]; then echo "untracked generated files:"; echo "$$untracked"; exit 1; fi

.PHONY: lint
lint: lint-api lint-chart $(GOLANGCI_LINT) ## Run golangci-lint, kube-api-linter on the API types, and helm lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-chart
lint-chart: helm ## helm lint charts/evalrun-operator (strict).
	$(EVALRUN_HELM) lint --strict charts/evalrun-operator

.PHONY: lint-api
lint-api: $(KUBE_API_LINTER) ## Run kube-api-linter (.golangci-kal.yml) on api/ only.
	$(KUBE_API_LINTER) run --config .golangci-kal.yml ./api/...

$(GOLANGCI_LINT):
	cd hack/tools && $(GO) build -o $(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

$(KUBE_API_LINTER):
	cd hack/tools && $(GO) build -o $(KUBE_API_LINTER) sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter

##@ Test
.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver, etcd and kubectl for envtest (cached under bin/k8s/<version>).
	hack/k8s-binaries.sh kube-apiserver etcd kubectl

.PHONY: seaweedfs
seaweedfs: ## Build SeaweedFS's weed for the object store tests (cached under bin/seaweedfs/<version>).
	hack/seaweedfs.sh

.PHONY: prometheus
prometheus: ## Build Prometheus' prometheus and promtool (cached under bin/prometheus/<version>).
	hack/prometheus.sh >/dev/null

.PHONY: promtool
promtool: ## Build Prometheus' promtool only (the alert checks; cached under bin/prometheus/<version>).
	hack/prometheus.sh promtool >/dev/null

.PHONY: prometheus-operator
prometheus-operator: ## Build the Prometheus Operator and its config reloader (cached under bin/prometheus-operator/<version>).
	hack/prometheus-operator.sh >/dev/null

.PHONY: check-rules
check-rules: promtool ## promtool check rules and promtool test rules on the shipped alerts (test/install).
	$(GO) test ./test/install/ -run TestPromtoolRules -count=1

.PHONY: monitoring
monitoring: prometheus prometheus-operator ## Install the Prometheus Operator and a Prometheus on the local cluster.
	hack/monitoring.sh up

.PHONY: helm
helm: ## Build helm for the chart's lint and tests (cached under bin/tools/helm-<version>).
	hack/helm.sh >/dev/null

.PHONY: chromium
chromium: ## Install Debian's chromium when missing (the HTML report's browser tests drive it headless).
	hack/chromium.sh >/dev/null

.PHONY: nodejs
nodejs: ## Install Debian's nodejs when node is missing (AgentV's composite example runs a node script).
	hack/nodejs.sh >/dev/null

.PHONY: bun
bun: ## Fetch bun at the judge image's pin when missing (AgentV 4.42's examples grade with bun run).
	hack/bun.sh >/dev/null

.PHONY: test-unit
test-unit: envtest-assets seaweedfs helm chromium nodejs bun promtool ## Unit, fuzz-seed, envtest, object store (weed), chart (helm), browser (chromium) and alert (promtool) tests.
	artifacts="$${ARTIFACTS:-$(ROOT)/bin/artifacts}"; status=0; \
	  EVALRUN_REQUIRE_TEST_ASSETS=1 EVALRUN_CHROMIUM="$$(hack/chromium.sh)" ARTIFACTS="$$artifacts" $(GO) test ./... -count=1 || status=$$?; \
	  echo "test-unit: the browser tests' screenshots are in $$artifacts"; exit $$status

.PHONY: e2e-tools
e2e-tools: ## Build Prometheus, the Prometheus Operator and Kueue, which the e2e tests install (cached under bin/).
	hack/e2e-tools.sh

.PHONY: test-e2e
test-e2e: ## End-to-end tests on the real local cluster (brings it up; builds the e2e tools first).
	hack/e2e.sh

# The e2e tools build in the background (nice 19) from the start, in the CPU the other targets leave idle;
# hack/e2e.sh waits for them before its tests (hack/e2e-tools.sh).
.PHONY: test
test: ## Everything CI runs: verify, lint, test-unit and test-e2e, the e2e tools building meanwhile.
	hack/e2e-tools.sh during $(MAKE) verify lint test-unit test-e2e

.PHONY: bench
bench: ## Benchmarks (compare runs with benchstat).
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

##@ Build
.PHONY: build
build: ## Build the manager, collector and launcher binaries into bin/.
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/manager ./cmd/manager
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/collector ./cmd/collector
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/launcher ./cmd/launcher

.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/kubectl-evalrun (put bin/ on PATH for `kubectl evalrun`).
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/kubectl-evalrun ./cmd/kubectl-evalrun

.PHONY: build-installer
build-installer: manifests ## Write dist/install.yaml (CRDs, RBAC, manager) with IMG, COLLECTOR_IMG and JUDGE_IMG.
	IMG=$(IMG) COLLECTOR_IMG=$(COLLECTOR_IMG) JUDGE_IMG=$(JUDGE_IMG) hack/build-installer.sh dist/install.yaml

##@ Local cluster
.PHONY: cluster-up
cluster-up: ## Build (first time) and start the local single-node cluster.
	hack/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and undo every host change.
	hack/cluster.sh down

.PHONY: cluster-status
cluster-status: ## Show the local cluster's state.
	hack/cluster.sh status

.PHONY: images
images: ## Pack and import the manager, collector, pause and sample runner images.
	hack/images.sh

.PHONY: kueue
kueue: ## Build Kueue (pinned by hack/kueue/go.mod, cached under bin/kueue/<version>) and install it on the local cluster.
	hack/kueue.sh install

.PHONY: deploy
deploy: ## Deploy CRD, RBAC and manager to the local cluster.
	hack/deploy.sh

.PHONY: demo
demo: ## The main job: cluster up, deploy, run the sample EvalRun, print its results.
	hack/demo.sh
