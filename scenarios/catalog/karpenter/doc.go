// Package karpenter is the embedded catalog of every AWS instance type
// Karpenter knows (the labels Karpenter puts on a node of each type, its
// allocatable resources and its us-east-1 on-demand price) and the
// resolution of a NodePool's requirements against it.
//
// A NodePool selects instance types by requirements on well-known labels
// (karpenter.k8s.aws/instance-family In [g5, g6], instance-gpu-count Gt 0,
// kubernetes.io/arch In [amd64], ...). Resolve applies them the way
// Kubernetes node selectors do, one after another, and says which
// requirement left no type when none is left:
//
//   - In and NotIn compare the type's label value with the values; a type
//     without the label fails In and passes NotIn.
//   - Exists and DoesNotExist ask whether the type has the label (a type
//     without GPUs has no instance-gpu-name).
//   - Gt, Lt, Gte and Lte compare the label as an integer with the single
//     value; a type without the label, or with a value that is not an
//     integer, fails them.
//   - minValues asks for at least that many distinct values of the key
//     among the types left once every requirement has been applied.
//
// karpenter.sh/capacity-type selects offerings, not types (on-demand when
// not given, as Karpenter defaults); topology.kubernetes.io/zone and
// topology.kubernetes.io/region select where nodes launch. A key Karpenter
// does not define on instance types (team: research) becomes a label of
// the NodePool's nodes.
//
// Cheapest picks, among resolved types, the one Karpenter launches for a
// pod: the cheapest offering that fits, spot before on-demand when the
// NodePool allows both.
//
// The data are Karpenter's own generated instance-type reference and price
// table (see PROVENANCE.md beside the CSV files); nothing here reads the
// network.
package karpenter
