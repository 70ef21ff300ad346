// Package published holds the table of the example manifests that Kueue,
// Volcano, Karpenter's AWS provider and the Kubeflow trainer (and its
// predecessor, the training operator) publish in their repositories
// (testdata/, copied unchanged with their PROVENANCE): each file, the slot
// of a scenario it is given in, and whether gpuplan's readers load it or
// refuse it, with the reason. The package has no code of its own; its test
// holds the table and each project's share of files that load.
package published
