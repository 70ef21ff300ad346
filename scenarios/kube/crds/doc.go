// Package crds holds the published schemas of the custom resources gpuplan
// reads from manifests (Kueue's, and Karpenter's NodePool and EC2NodeClass),
// embedded, and compiles them once
// for strict.CRD checks: the OpenAPI schema (types, enums, bounds, unknown
// fields) and the CEL rules the API server runs on create.
package crds
