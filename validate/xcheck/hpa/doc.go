// Package hpa cross-checks gpuplan's HorizontalPodAutoscaler
// (sim/autoscale) against Kubernetes' own controller (k8s.io/kubernetes
// pkg/controller/podautoscaler, the release gpuplan's other cross-checks
// pin): the real HorizontalController, with its replica calculator and
// behavior normalisation, reconciles a Deployment's scale subresource on a
// fake clientset inside a testing/synctest bubble, whose virtual clock is
// the time.Now() the controller reads; a fake metrics client reports the
// case's metric at each sync. gpuplan's HPA, with the spec gpuplan's
// manifest importer reads from the very same HorizontalPodAutoscaler, is
// synced on the same observations. Compared: the replicas after every
// sync.
//
// It is a module of its own (it requires k8s.io/kubernetes, which the
// other drivers' module does not need to build) and holds no code of
// Kubernetes: the controller runs unmodified.
package hpa
